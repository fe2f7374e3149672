import { describe, expect, it } from 'vitest';
import { evaluate, evaluateWithTrace } from '../../gate/evaluate.js';
import { READ_ONLY_TOOLS } from '../../gate/read-only.js';
import { compileYaml } from '../../gate/testing.js';
import type { Normalized } from '../runtime.js';
import { failsClosed, isReadOnlyTool } from './fail-closed.js';

/** The default gate options: the built-in read-only list, `fail_open_low` on. */
const defaults = compileYaml('rules: []\n');
/** A rule that errors on every intent, so the gate decides with the policy broken. */
const broken = compileYaml(
  `rules:\n  - { id: broken, when: 'input.missing == "x"', decision: deny, reason_code: NEVER }\n`,
);

const WEB_TOOLS = ['WebSearch', 'WebFetch', 'google_web_search'];
const WRITERS = ['Bash', 'Write', 'Edit', 'run_shell_command', 'mcp__github__create_issue'];

function blocking(tool: string): Normalized {
  return { event: 'PreToolUse', envelopes: [], blocking: true, intent: { tool, input: {} } };
}

const gateRisk = (tool: string) => evaluateWithTrace(defaults, { tool, input: {} }).trace.risk;
const bridgeFailsClosed = (tool: string) => failsClosed(blocking(tool), 'closed');

describe('one read-only list for the gate and the hook bridge', () => {
  it('holds exact names only, so the bridge’s set lookup and the gate’s glob matcher agree', () => {
    for (const tool of READ_ONLY_TOOLS) expect(tool).not.toContain('*');
    expect(new Set(READ_ONLY_TOOLS).size).toBe(READ_ONLY_TOOLS.length);
  });

  it.each([...READ_ONLY_TOOLS])('lets %s run on both sides when no decision can be had', (tool) => {
    expect(isReadOnlyTool(tool)).toBe(true);
    expect(bridgeFailsClosed(tool)).toBe(false);
    expect(gateRisk(tool)).toBe('low');
    expect(evaluate(broken, { tool, input: {} })).toMatchObject({ decision: 'allow' });
    expect(evaluate(undefined, { tool, input: {} })).toMatchObject({ decision: 'allow' });
  });

  it.each([...WEB_TOOLS, ...WRITERS])('fails %s closed on both sides', (tool) => {
    expect(isReadOnlyTool(tool)).toBe(false);
    expect(bridgeFailsClosed(tool)).toBe(true);
    expect(gateRisk(tool)).toBe('high');
    expect(evaluate(broken, { tool, input: {} })).toMatchObject({
      decision: 'deny',
      reason_code: 'POLICY_ERROR',
    });
    expect(evaluate(undefined, { tool, input: {} })).toMatchObject({
      decision: 'deny',
      reason_code: 'POLICY_UNAVAILABLE',
    });
  });

  it('treats WebSearch as egress, not as a read: the query can carry what was just read', () => {
    expect(READ_ONLY_TOOLS).not.toContain('WebSearch');
    expect(gateRisk('WebSearch')).toBe('high');
    expect(bridgeFailsClosed('WebSearch')).toBe(true);
    expect(evaluate(defaults, { tool: 'WebSearch', input: { query: 'x' } }, { frozen: true })).toMatchObject({
      decision: 'deny',
      reason_code: 'FROZEN_READ_ONLY',
    });
  });
});
