import { describe, expect, it } from 'vitest';
import {
  bridgeArgv,
  configDefinesHooks,
  type NotifyEdit,
  parseStringArray,
  setCodexNotify,
} from './codex-toml.js';

const OURS = 'notify = ["switchboard", "hook", "codex"]';

function text(edit: NotifyEdit): string {
  if (edit.kind !== 'ok') throw new Error(JSON.stringify(edit));
  return edit.text;
}

describe('setting notify in config.toml', () => {
  it('writes a lone notify line into an empty or missing file', () => {
    expect(setCodexNotify('')).toEqual({ kind: 'ok', text: `${OURS}\n`, changed: true });
  });

  it('puts the line after the top-level keys, before the first table and the comment above it', () => {
    const before = [
      '# Codex settings',
      'model = "gpt-5.1-codex"',
      'approval_policy = "on-request" # ask first',
      '',
      '# my MCP servers',
      '[mcp_servers.docs]',
      'command = "docs-mcp"',
      '',
    ].join('\n');
    expect(text(setCodexNotify(before))).toBe(
      [
        '# Codex settings',
        'model = "gpt-5.1-codex"',
        'approval_policy = "on-request" # ask first',
        OURS,
        '',
        '# my MCP servers',
        '[mcp_servers.docs]',
        'command = "docs-mcp"',
        '',
      ].join('\n'),
    );
  });

  it('puts the line at the top when the file starts with a table', () => {
    const before = '[tui]\nnotify = true\n';
    expect(text(setCodexNotify(before))).toBe(`${OURS}\n[tui]\nnotify = true\n`);
  });

  it('appends after the last key when there is no table, adding a missing final newline', () => {
    expect(text(setCodexNotify('model = "o3"'))).toBe(`model = "o3"\n${OURS}\n`);
    expect(text(setCodexNotify('# only a comment\n'))).toBe(`# only a comment\n${OURS}\n`);
  });

  it('is not fooled by a bracket at the start of a line inside a multi-line array or string', () => {
    const before = [
      'sandbox_allow = [',
      '  ["a", "b"], # nested',
      '  "[not a table]",',
      ']',
      'instructions = """',
      '[also not a table]',
      'notify = "inside a string"',
      '"""',
      "path = 'C:\\temp'",
      '[profiles.fast]',
      'model = "o4-mini"',
    ].join('\n');
    const after = text(setCodexNotify(before));
    expect(after.split('\n').slice(8, 11)).toEqual(["path = 'C:\\temp'", OURS, '[profiles.fast]']);
  });

  it('changes nothing when our notify is there, however it is spelled', () => {
    for (const line of [
      OURS,
      "notify = ['switchboard','hook','codex'] # Switchboard",
      'notify = [\n  "switchboard", # the CLI\n  "hook",\n  "codex",\n]',
      '"notify" = ["switchboard", "hook", "codex"]',
    ]) {
      const before = `model = "o3"\n${line}\n[tui]\n`;
      expect(setCodexNotify(before)).toEqual({ kind: 'ok', text: before, changed: false });
    }
  });

  it('reports someone else’s notify as a conflict and leaves it', () => {
    expect(setCodexNotify('notify = ["terminal-notifier", "-title", "Codex"]\n')).toEqual({
      kind: 'conflict',
      existing: '["terminal-notifier", "-title", "Codex"]',
    });
    expect(setCodexNotify('notify = "python3 notify.py"\n')).toMatchObject({ kind: 'conflict' });
    expect(setCodexNotify('notify.program = "x"\n')).toMatchObject({ kind: 'conflict' });
  });

  it('ignores a notify key inside a table, which is not the top-level one', () => {
    const before = '[tui]\nnotify = ["terminal-notifier"]\n';
    expect(text(setCodexNotify(before))).toBe(`${OURS}\n${before}`);
  });

  it('replaces its own notify when the bridge command changes, keeping a trailing comment', () => {
    const before = 'notify = ["switchboard", "hook", "codex"] # keep me\r\n[tui]\r\n';
    const after = text(setCodexNotify(before, ['node', '/opt/sb/main.js', 'hook', 'codex']));
    expect(after).toBe('notify = ["node", "/opt/sb/main.js", "hook", "codex"] # keep me\r\n[tui]\r\n');
  });

  it('keeps CRLF line endings when inserting', () => {
    expect(text(setCodexNotify('model = "o3"\r\n[tui]\r\n'))).toBe(`model = "o3"\r\n${OURS}\r\n[tui]\r\n`);
  });

  it('refuses a file it cannot scan instead of guessing', () => {
    expect(setCodexNotify('model = "o3\n')).toMatchObject({ kind: 'invalid' });
    expect(setCodexNotify('sandbox = [\n "a",\n')).toMatchObject({ kind: 'invalid' });
    expect(setCodexNotify('just words\n')).toMatchObject({ kind: 'invalid' });
  });
});

describe('reading and writing argv', () => {
  it('reads plain string arrays with either quote and escapes', () => {
    expect(parseStringArray('["a\\"b", \'c\\d\', ]')).toEqual(['a"b', 'c\\d']);
    expect(parseStringArray('[]')).toEqual([]);
    expect(parseStringArray('["a", 1]')).toBeUndefined();
    expect(parseStringArray('"a"')).toBeUndefined();
  });

  it('turns a shell-free bridge command into argv and refuses one that needs a shell', () => {
    expect(bridgeArgv('switchboard hook codex')).toEqual(['switchboard', 'hook', 'codex']);
    expect(bridgeArgv(' node  /opt/sb/main.js hook codex ')).toEqual([
      'node',
      '/opt/sb/main.js',
      'hook',
      'codex',
    ]);
    expect(bridgeArgv('SWITCHBOARD_KEY=$K switchboard hook codex')).toBeUndefined();
    expect(bridgeArgv("sh -c 'switchboard hook codex'")).toBeUndefined();
  });

  it('notices hooks defined inline in config.toml', () => {
    expect(configDefinesHooks('[[hooks.PreToolUse]]\n')).toBe(true);
    expect(configDefinesHooks('model = "o3"\n[hooks]\n')).toBe(true);
    expect(configDefinesHooks('[hooksmith]\n[tui]\n')).toBe(false);
  });
});
