import { describe, expect, it } from 'vitest';
import { classify, doubleUnderscoreMcp, patchFiles, underscoreMcp, urlsIn } from './kinds.js';

describe('the kind table interpreter', () => {
  const table = {
    tools: {
      Bash: { kind: 'shell', args: { command: 'command' } },
      Fetch: { kind: 'web.fetch', args: { urls: 'urls' } },
    },
    mcp: doubleUnderscoreMcp,
  } as const;

  it('reads the args the table names and falls back to the hook cwd for a shell', () => {
    expect(classify(table, { tool: 'Bash', input: { command: 'ls' }, cwd: '/w' })).toEqual({
      kind: 'shell',
      args: { command: 'ls', cwd: '/w' },
    });
  });

  it('joins a command given as argv back into one line, quoting what a shell would split', () => {
    expect(
      classify(table, { tool: 'Bash', input: { command: ['git', 'commit', '-m', "it's done"] } }).args
        .command,
    ).toBe(`git commit -m 'it'\\''s done'`);
  });

  it('takes the first of several URLs as url', () => {
    expect(
      classify(table, { tool: 'Fetch', input: { urls: ['https://a.example', 'https://b.example'] } }).args,
    ).toEqual({
      urls: ['https://a.example', 'https://b.example'],
      url: 'https://a.example',
    });
  });

  it('knows MCP names by their shape and everything else as other', () => {
    expect(classify(table, { tool: 'mcp__plugin_x_github__create_issue', input: {} })).toEqual({
      kind: 'mcp',
      args: { server: 'plugin_x_github', tool: 'create_issue' },
    });
    expect(classify(table, { tool: 'TodoWrite', input: {} })).toEqual({ kind: 'other', args: {} });
    expect(classify(table, { tool: 'constructor', input: {} }).kind).toBe('other');
  });

  it('reads both MCP name shapes where single underscores are used', () => {
    expect(underscoreMcp('mcp_github_create_issue')).toEqual({ server: 'github', tool: 'create_issue' });
    expect(underscoreMcp('mcp__github__create_issue')).toEqual({ server: 'github', tool: 'create_issue' });
    expect(underscoreMcp('mcp_')).toBeUndefined();
  });
});

describe('patchFiles', () => {
  it('lists every file a patch touches and tells an add-only or delete-only patch apart', () => {
    const update =
      '*** Begin Patch\n*** Update File: a.ts\n*** Move to: b.ts\n*** Delete File: c.ts\n*** End Patch';
    expect(patchFiles(update)).toEqual({ paths: ['a.ts', 'b.ts', 'c.ts'] });
    expect(patchFiles('*** Add File: n.md\n+x')).toEqual({ paths: ['n.md'], kind: 'file.write' });
    expect(patchFiles('*** Delete File: old.md')).toEqual({ paths: ['old.md'], kind: 'file.delete' });
  });
});

describe('urlsIn', () => {
  it('finds the URLs of a prompt without trailing punctuation', () => {
    expect(urlsIn('Read https://a.example/x, then (https://b.example/y).')).toEqual([
      'https://a.example/x',
      'https://b.example/y',
    ]);
  });
});
