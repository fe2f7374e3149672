import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runtimeFor } from '../runtimes/index.js';
import { type SignalKind, signalsConfigSchema, kindEnabled } from './config.js';
import { reportFor } from './context.js';
import { toSignal } from './mapping.js';

/** Runs a fixture through the real adapter, then the mapping: what the relay subscriber would see. */
function signalOf(runtime: string, name: string, patch: Record<string, unknown> = {}) {
  const raw = {
    ...JSON.parse(
      readFileSync(new URL(`../runtimes/${runtime}/fixtures/${name}.json`, import.meta.url), 'utf8'),
    ),
    ...patch,
  };
  const n = runtimeFor(runtime)!.normalize(JSON.stringify(raw), { argv: [] });
  const e = n.envelopes[0]!;
  return toSignal(e.type, String(e.redacted_summary?.event ?? ''), raw);
}

describe('mapping runtime signals to stages', () => {
  const cases: [string, string, Record<string, unknown>, SignalKind | undefined, string | undefined][] = [
    ['claude-code', 'Notification', {}, 'permission_prompt', 'awaiting_approval'],
    [
      'claude-code',
      'Notification',
      { notification_type: 'elicitation_dialog' },
      'elicitation',
      'awaiting_approval',
    ],
    ['claude-code', 'Notification', { notification_type: 'idle_prompt' }, 'idle_prompt', 'blocked'],
    ['claude-code', 'Notification', { notification_type: 'auth_success' }, 'other_notification', 'progress'],
    ['claude-code', 'Elicitation', {}, 'elicitation', 'awaiting_approval'],
    ['claude-code', 'Stop', {}, 'turn_done', 'done'],
    ['claude-code', 'SubagentStop', {}, 'subagent_done', 'progress'],
    ['claude-code', 'StopFailure', {}, 'turn_failed', 'failed'],
    ['claude-code', 'SessionEnd', {}, 'session_ended', 'done'],
    ['claude-code', 'PermissionRequest', {}, 'permission_request', 'awaiting_approval'],
    ['claude-code', 'PreToolUse', {}, undefined, undefined],
    ['claude-code', 'PostToolUse', {}, undefined, undefined],
    ['claude-code', 'MessageDisplay', {}, undefined, undefined],
    ['codex', 'agent-turn-complete', {}, 'turn_done', 'done'],
    ['codex', 'Stop', {}, 'turn_done', 'done'],
    ['codex', 'Interrupt', {}, 'turn_failed', 'failed'],
    ['codex', 'PermissionRequest', {}, 'permission_request', 'awaiting_approval'],
    ['gemini-cli', 'Notification', {}, 'permission_prompt', 'awaiting_approval'],
    ['gemini-cli', 'AfterAgent', {}, 'turn_done', 'done'],
    ['gemini-cli', 'AfterTool', {}, undefined, undefined],
    ['hermes', 'agent_loop_stopped', {}, 'turn_done', 'done'],
    ['hermes', 'pre_approval_request', {}, 'permission_request', 'awaiting_approval'],
    ['hermes', 'subagent_stop', {}, 'subagent_done', 'progress'],
    ['openclaw', 'agent_end', {}, 'turn_done', 'done'],
    [
      'openclaw',
      'agent_end',
      { event: { runId: 'r', success: false, error: 'boom' } },
      'turn_failed',
      'failed',
    ],
    ['openclaw', 'session_end', {}, 'session_ended', 'done'],
    ['openclaw', 'after_tool_call', {}, undefined, undefined],
  ];
  it.each(cases)('maps %s %s %j to %s (%s)', (runtime, name, patch, kind, stage) => {
    const s = signalOf(runtime, name, patch);
    expect(s?.kind).toBe(kind);
    expect(s?.stage).toBe(stage);
  });

  it('keeps the last assistant message of each runtime that gives one', () => {
    expect(signalOf('claude-code', 'Stop')?.text).toBe("I've completed the refactoring.");
    expect(signalOf('codex', 'agent-turn-complete')?.text).toContain('cargo build');
    expect(signalOf('gemini-cli', 'AfterAgent')?.text).toBe('Done.');
  });

  it('marks only prompts that wait for a person as needing one', () => {
    expect(signalOf('claude-code', 'Notification')?.needsPerson).toBe(true);
    expect(signalOf('claude-code', 'StopFailure')?.needsPerson).toBe(false);
    expect(signalOf('claude-code', 'Stop')?.needsPerson).toBe(false);
  });
});

describe('the signals config', () => {
  it('follows the seed table by default', () => {
    const cfg = signalsConfigSchema.parse({});
    expect(kindEnabled(cfg, 'claude-code', 'permission_prompt')).toBe(true);
    expect(kindEnabled(cfg, 'claude-code', 'turn_done')).toBe(true);
    expect(kindEnabled(cfg, 'claude-code', 'subagent_done')).toBe(false);
    expect(kindEnabled(cfg, 'claude-code', 'permission_request')).toBe(false);
    expect(kindEnabled(cfg, 'hermes', 'permission_request')).toBe(true);
  });

  it('lets a runtime override win over the global switch', () => {
    const cfg = signalsConfigSchema.parse({
      events: { turn_done: false },
      runtimes: { codex: { turn_done: true } },
    });
    expect(kindEnabled(cfg, 'claude-code', 'turn_done')).toBe(false);
    expect(kindEnabled(cfg, 'codex', 'turn_done')).toBe(true);
  });

  it('refuses unknown keys, unknown runtimes and unknown kinds', () => {
    expect(signalsConfigSchema.safeParse({ colour: 'red' }).success).toBe(false);
    expect(signalsConfigSchema.safeParse({ runtimes: { vim: {} } }).success).toBe(false);
    expect(signalsConfigSchema.safeParse({ events: { per_tool_call: true } }).success).toBe(false);
    expect(signalsConfigSchema.safeParse({ away: { auto_after_idle_seconds: 0 } }).success).toBe(false);
  });
});

describe('the report a signal becomes', () => {
  it('puts project and branch in the summary and the waiting time in the detail', () => {
    const signal = signalOf('claude-code', 'Notification')!;
    const r = reportFor(signal, { project: 'app', branch: 'main', session: 's1', waitingMs: 125_000 }, 280);
    expect(r.summary).toBe('Needs your permission · app (main)');
    expect(r.detail).toBe(
      'Claude needs your permission to use Bash\nproject: app\nbranch: main\nsession: s1\nwaiting: 2 min',
    );
  });

  it('never cuts the runtime words inside a secret, so the content gate still sees it whole', () => {
    const token = ['ghp_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'].join('');
    const signal = {
      ...signalOf('claude-code', 'Stop')!,
      text: `${'x'.repeat(60)} ${token} and more after it`,
    };
    const detail = reportFor(signal, {}, 70).detail ?? '';
    expect(detail).toContain(token);
    expect(detail).not.toContain('and more');
  });

  it('keeps an invisible U+FEFF inside a token instead of folding it into a splitting space', () => {
    const signal = { ...signalOf('claude-code', 'Stop')!, text: 'key sk-proj-\ufeffabc\n\nnext' };
    expect(reportFor(signal, {}, 280).detail).toBe('key sk-proj-\ufeffabc next');
  });

  it('keeps the summary within 120 characters', () => {
    const signal = signalOf('claude-code', 'Stop')!;
    expect(reportFor(signal, { project: 'p'.repeat(300) }, 280).summary).toHaveLength(120);
  });
});
