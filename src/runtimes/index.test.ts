import { describe, expect, it } from 'vitest';
import { RUNTIMES, RUNTIME_KINDS, capabilityRows, formatCapabilityTable, runtimeFor } from './index.js';

describe('runtime registry', () => {
  it('holds exactly the six runtimes the contract names, each under its own kind', () => {
    expect(RUNTIME_KINDS.sort()).toEqual([
      'claude-code',
      'codex',
      'cursor',
      'gemini-cli',
      'hermes',
      'openclaw',
    ]);
    for (const kind of RUNTIME_KINDS) expect(RUNTIMES[kind].kind).toBe(kind);
  });

  it('finds an adapter by path segment and nothing for Object.prototype names', () => {
    expect(runtimeFor('codex')?.kind).toBe('codex');
    expect(runtimeFor('constructor')).toBeUndefined();
    expect(runtimeFor('nope')).toBeUndefined();
  });

  it('lists one capability row per runtime event, with notes only where there are some', () => {
    const rows = capabilityRows();
    const total = Object.values(RUNTIMES).reduce((n, a) => n + Object.keys(a.capabilities).length, 0);
    expect(rows).toHaveLength(total);
    expect(rows).toContainEqual(
      expect.objectContaining({ runtime: 'claude-code', event: 'PreToolUse', capability: 'can_block' }),
    );
    expect(rows.every((r) => r.notes === undefined || r.notes.length > 0)).toBe(true);
  });

  it('formats the matrix as aligned text with a header', () => {
    const text = formatCapabilityTable(capabilityRows([RUNTIMES.hermes]));
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^RUNTIME\s+EVENT\s+CAPABILITY\s+ENVELOPE TYPE$/);
    expect(lines[1]).toMatch(/^hermes\s+pre_tool_call\s+can_block\s+agent\.tool\.requested$/);
  });
});
