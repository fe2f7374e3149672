import { describe, expect, it } from 'vitest';
import { CLAUDE_CODE_EVENTS } from '../claude-code/events.js';
import {
  type ClaudeCodeSetupOptions,
  type MergeOutcome,
  OBSERVER_TIMEOUT_SEC,
  mergeClaudeCodeSettings,
  removeClaudeCodeHooks,
  settingsPath,
} from './claude-code.js';

const HTTP: ClaudeCodeSetupOptions = { transport: 'http', url: 'http://127.0.0.1:8787' };
const COMMAND: ClaudeCodeSetupOptions = { transport: 'command', url: 'http://127.0.0.1:8787' };

type Json = Record<string, unknown>;
function ok(outcome: MergeOutcome): Json {
  if (outcome.kind !== 'ok') throw new Error(outcome.problem);
  return outcome.settings;
}
const groups = (settings: Json, event: string) => (settings.hooks as Record<string, Json[]>)[event] ?? [];

const userSettings = (): Json => ({
  permissions: { allow: ['Bash(npm test)'] },
  env: { FOO: '1' },
  hooks: {
    PreToolUse: [
      { matcher: 'Bash', hooks: [{ type: 'command', command: './.claude/hooks/block-rm.sh', timeout: 30 }] },
    ],
    Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
  },
});

describe('merging Switchboard hooks into Claude Code settings', () => {
  it('adds an HTTP gate on PreToolUse with the key taken from the environment', () => {
    const settings = ok(mergeClaudeCodeSettings({}, HTTP));
    expect(groups(settings, 'PreToolUse')).toEqual([
      {
        matcher: '*',
        hooks: [
          {
            type: 'http',
            url: 'http://127.0.0.1:8787/v1/runtimes/claude-code/hooks',
            headers: { Authorization: 'Bearer $SWITCHBOARD_KEY' },
            allowedEnvVars: ['SWITCHBOARD_KEY'],
          },
        ],
      },
    ]);
  });

  it('uses the command bridge for SessionStart, where Claude Code refuses HTTP hooks', () => {
    const settings = ok(mergeClaudeCodeSettings({}, HTTP));
    expect(groups(settings, 'SessionStart')).toEqual([
      {
        hooks: [{ type: 'command', command: 'switchboard hook claude-code', timeout: OBSERVER_TIMEOUT_SEC }],
      },
    ]);
  });

  it('gives observers a short timeout and the gate a configured one', () => {
    const settings = ok(mergeClaudeCodeSettings({}, { ...COMMAND, gateTimeoutSec: 120 }));
    expect(groups(settings, 'PostToolUse')[0]?.hooks).toEqual([
      { type: 'command', command: 'switchboard hook claude-code', timeout: OBSERVER_TIMEOUT_SEC },
    ]);
    expect(groups(settings, 'PreToolUse')[0]?.hooks).toEqual([
      { type: 'command', command: 'switchboard hook claude-code', timeout: 120 },
    ]);
  });

  it('keeps every other key, event and handler, with the user’s groups first', () => {
    const before = userSettings();
    const settings = ok(mergeClaudeCodeSettings(before, HTTP));
    expect(settings.permissions).toEqual({ allow: ['Bash(npm test)'] });
    expect(settings.env).toEqual({ FOO: '1' });
    expect(groups(settings, 'PreToolUse')[0]).toEqual(groups(userSettings(), 'PreToolUse')[0]);
    expect(groups(settings, 'PreToolUse')).toHaveLength(2);
    expect(groups(settings, 'Stop')[0]).toEqual({ hooks: [{ type: 'command', command: 'say done' }] });
    expect(before).toEqual(userSettings());
  });

  it('changes nothing the second time', () => {
    const once = ok(mergeClaudeCodeSettings(userSettings(), HTTP));
    const twice = mergeClaudeCodeSettings(once, HTTP);
    expect(twice).toMatchObject({ kind: 'ok', changed: false });
    expect(ok(twice)).toEqual(once);
  });

  it('leaves our groups where the user moved them', () => {
    const once = ok(mergeClaudeCodeSettings(userSettings(), COMMAND));
    const pre = groups(once, 'PreToolUse');
    const moved = { ...once, hooks: { ...(once.hooks as Json), PreToolUse: [...pre].reverse() } };
    expect(mergeClaudeCodeSettings(moved, COMMAND)).toMatchObject({
      kind: 'ok',
      changed: false,
      settings: moved,
    });
  });

  it('replaces its own handlers when the transport changes, without duplicates', () => {
    const http = ok(mergeClaudeCodeSettings(userSettings(), HTTP));
    const command = ok(mergeClaudeCodeSettings(http, COMMAND));
    const pre = groups(command, 'PreToolUse');
    expect(pre).toHaveLength(2);
    expect(JSON.stringify(command)).not.toContain('/v1/runtimes/claude-code/hooks');
  });

  it('recognizes a custom bridge command on the next run', () => {
    const custom = { ...COMMAND, command: 'node /opt/sb/dist/cli/main.js hook claude-code' };
    const once = ok(mergeClaudeCodeSettings({}, custom));
    expect(mergeClaudeCodeSettings(once, custom)).toMatchObject({ kind: 'ok', changed: false });
  });

  it('pulls its handler out of a user group it shares, keeping the user’s handler there', () => {
    const shared = {
      hooks: {
        PreToolUse: [
          {
            matcher: '*',
            hooks: [
              { type: 'command', command: 'switchboard hook claude-code' },
              { type: 'command', command: './mine.sh' },
            ],
          },
        ],
      },
    };
    const settings = ok(mergeClaudeCodeSettings(shared, COMMAND));
    expect(groups(settings, 'PreToolUse')[0]).toEqual({
      matcher: '*',
      hooks: [{ type: 'command', command: './mine.sh' }],
    });
    expect(groups(settings, 'PreToolUse')).toHaveLength(2);
  });

  it('reports a settings file it cannot walk instead of overwriting it', () => {
    expect(mergeClaudeCodeSettings([], HTTP)).toMatchObject({ kind: 'invalid' });
    expect(mergeClaudeCodeSettings({ hooks: [] }, HTTP)).toMatchObject({
      kind: 'invalid',
      problem: '"hooks" is not an object',
    });
    expect(mergeClaudeCodeSettings({ hooks: { Stop: {} } }, HTTP)).toMatchObject({
      kind: 'invalid',
      problem: '"hooks.Stop" is not an array',
    });
    expect(mergeClaudeCodeSettings({ hooks: { Stop: [{ hooks: 'x' }] } }, HTTP)).toMatchObject({
      kind: 'invalid',
    });
  });

  it('warns when disableAllHooks would silence every hook', () => {
    expect(mergeClaudeCodeSettings({ disableAllHooks: true }, HTTP)).toMatchObject({
      kind: 'ok',
      warnings: ['"disableAllHooks" is true: no hook will run'],
    });
  });

  it('writes only documented events, group keys and handler keys', () => {
    for (const options of [HTTP, { ...COMMAND, gateTimeoutSec: 60 }]) {
      const hooks = ok(mergeClaudeCodeSettings({}, options)).hooks as Record<string, Json[]>;
      for (const [event, list] of Object.entries(hooks)) {
        expect(Object.keys(CLAUDE_CODE_EVENTS)).toContain(event);
        for (const group of list) {
          expect(Object.keys(group).every((k) => ['matcher', 'hooks'].includes(k))).toBe(true);
          for (const handler of group.hooks as Json[]) {
            const allowed =
              handler.type === 'http'
                ? ['type', 'url', 'headers', 'allowedEnvVars', 'timeout']
                : ['type', 'command', 'timeout'];
            expect(Object.keys(handler).filter((k) => !allowed.includes(k))).toEqual([]);
          }
        }
      }
    }
  });
});

describe('removing Switchboard hooks', () => {
  it('removes only Switchboard handlers and the groups they alone filled', () => {
    const installed = ok(mergeClaudeCodeSettings(userSettings(), HTTP));
    const removed = removeClaudeCodeHooks(installed);
    expect(removed).toMatchObject({ kind: 'ok', changed: true });
    expect(ok(removed)).toEqual(userSettings());
    expect(removeClaudeCodeHooks(userSettings())).toMatchObject({ kind: 'ok', changed: false });
  });
});

describe('settings paths', () => {
  it('puts project, local and user settings where Claude Code reads them', () => {
    const where = { cwd: '/repo', home: '/home/me' };
    expect(settingsPath('project', where)).toBe('/repo/.claude/settings.json');
    expect(settingsPath('local', where)).toBe('/repo/.claude/settings.local.json');
    expect(settingsPath('user', where)).toBe('/home/me/.claude/settings.json');
  });
});
