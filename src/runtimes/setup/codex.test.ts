import { describe, expect, it } from 'vitest';
import { CODEX_EVENTS } from '../codex/events.js';
import {
  CODEX_OBSERVER_TIMEOUT_SEC,
  type CodexMergeOutcome,
  codexConfigPath,
  codexHooksPath,
  mergeCodexHooks,
} from './codex.js';

type Json = Record<string, unknown>;
function ok(outcome: CodexMergeOutcome): Json {
  if (outcome.kind !== 'ok') throw new Error(outcome.problem);
  return outcome.hooksFile;
}
const groups = (file: Json, event: string) => (file.hooks as Record<string, Json[]>)[event] ?? [];

/** The event names in codex-rs/hooks/src/lib.rs (reference/runtimes.md §2.3). */
const CODE_EVENTS = [
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PreCompact',
  'PostCompact',
  'SessionStart',
  'UserPromptSubmit',
  'SubagentStart',
  'SubagentStop',
  'Stop',
];

const userFile = (): Json => ({
  hooks: {
    PreToolUse: [{ matcher: '^Bash$', hooks: [{ type: 'command', command: './guard.sh', timeout: 5 }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
  },
});

describe('merging Switchboard hooks into Codex hooks.json', () => {
  it('gates PreToolUse with the bridge and Codex’s own timeout, for every tool', () => {
    const file = ok(mergeCodexHooks(undefined));
    expect(groups(file, 'PreToolUse')).toEqual([
      { hooks: [{ type: 'command', command: 'switchboard hook codex' }] },
    ]);
    expect(groups(file, 'PostToolUse')).toEqual([
      {
        hooks: [{ type: 'command', command: 'switchboard hook codex', timeout: CODEX_OBSERVER_TIMEOUT_SEC }],
      },
    ]);
  });

  it('writes exactly the events in Codex’s code, command handlers only, with documented keys', () => {
    const hooks = ok(mergeCodexHooks({})).hooks as Record<string, Json[]>;
    expect(Object.keys(hooks).sort()).toEqual([...CODE_EVENTS].sort());
    for (const [event, list] of Object.entries(hooks)) {
      expect(Object.keys(CODEX_EVENTS)).toContain(event);
      for (const group of list) {
        expect(Object.keys(group)).toEqual(['hooks']);
        for (const handler of group.hooks as Json[]) {
          expect(handler.type).toBe('command');
          expect(Object.keys(handler).filter((k) => !['type', 'command', 'timeout'].includes(k))).toEqual([]);
        }
      }
    }
  });

  it('keeps every other key, event and handler, with the user’s groups first', () => {
    const before = { ...userFile(), note: 'mine' };
    const file = ok(mergeCodexHooks(before));
    expect(file.note).toBe('mine');
    expect(groups(file, 'PreToolUse')[0]).toEqual(groups(userFile(), 'PreToolUse')[0]);
    expect(groups(file, 'PreToolUse')).toHaveLength(2);
    expect(groups(file, 'Stop')[0]).toEqual({ hooks: [{ type: 'command', command: 'say done' }] });
    expect(before).toEqual({ ...userFile(), note: 'mine' });
  });

  it('changes nothing the second time, even where the user moved our groups', () => {
    const once = ok(mergeCodexHooks(userFile()));
    expect(mergeCodexHooks(once)).toEqual({ kind: 'ok', hooksFile: once, changed: false });
    const moved = {
      hooks: { ...(once.hooks as Json), PreToolUse: [...groups(once, 'PreToolUse')].reverse() },
    };
    expect(mergeCodexHooks(moved)).toMatchObject({ kind: 'ok', changed: false, hooksFile: moved });
  });

  it('replaces its own handlers when the bridge command changes, without duplicates', () => {
    const once = ok(mergeCodexHooks(userFile()));
    const custom = 'node /opt/sb/dist/cli/main.js hook codex';
    const again = ok(mergeCodexHooks(once, custom));
    expect(groups(again, 'PreToolUse')).toHaveLength(2);
    expect(JSON.stringify(again)).not.toContain('"switchboard hook codex"');
    expect(mergeCodexHooks(again, custom)).toMatchObject({ kind: 'ok', changed: false });
  });

  it('pulls its handler out of a user group it shares and leaves Claude Code’s bridge alone', () => {
    const shared = {
      hooks: {
        PreToolUse: [
          {
            matcher: '^Bash$',
            hooks: [
              { type: 'command', command: 'switchboard hook codex' },
              { type: 'command', command: 'switchboard hook claude-code' },
            ],
          },
        ],
      },
    };
    const file = ok(mergeCodexHooks(shared));
    expect(groups(file, 'PreToolUse')[0]).toEqual({
      matcher: '^Bash$',
      hooks: [{ type: 'command', command: 'switchboard hook claude-code' }],
    });
  });

  it('reports a hooks file it cannot walk instead of overwriting it', () => {
    expect(mergeCodexHooks([])).toMatchObject({ kind: 'invalid' });
    expect(mergeCodexHooks({ hooks: [] })).toEqual({ kind: 'invalid', problem: '"hooks" is not an object' });
    expect(mergeCodexHooks({ hooks: { Stop: {} } })).toEqual({
      kind: 'invalid',
      problem: '"hooks.Stop" is not an array',
    });
    expect(mergeCodexHooks({ hooks: { Stop: [{ hooks: 'x' }] } })).toMatchObject({ kind: 'invalid' });
  });
});

describe('Codex paths', () => {
  it('puts hooks.json where Codex reads it and config.toml in the user’s ~/.codex', () => {
    const where = { cwd: '/repo', home: '/home/me' };
    expect(codexHooksPath('user', where)).toBe('/home/me/.codex/hooks.json');
    expect(codexHooksPath('project', where)).toBe('/repo/.codex/hooks.json');
    expect(codexConfigPath('/home/me')).toBe('/home/me/.codex/config.toml');
  });
});
