import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DECISIONS, runtimeCase } from '../runtime.case.js';
import { hermes } from './adapter.js';

const fixturesDir = fileURLToPath(new URL('./fixtures', import.meta.url));
const fixture = (event: string): Record<string, unknown> =>
  JSON.parse(readFileSync(`${fixturesDir}/${event}.json`, 'utf8'));
const parse = (stdout: string): unknown => JSON.parse(stdout);

// Hermes shell-hook stdout directives (reference/runtimes.md §3.2).
const PRE_TOOL = ['action', 'message', 'rule_key', 'args.*', 'decision', 'reason', 'tool_input.*'];

runtimeCase(hermes, {
  fixturesDir,
  allowedKeys: (event) =>
    event === 'pre_tool_call' ? PRE_TOOL : event === 'pre_llm_call' ? ['context'] : [],
});

describe('Hermes golden replies', () => {
  const pre = hermes.normalize(fixture('pre_tool_call'));

  it('reads the tool call id and turn from extra', () => {
    expect(pre.intent).toEqual({ tool: 'terminal', input: { command: 'rm -rf /' } });
    expect(pre.envelopes[0]).toMatchObject({
      execution: { session_id: 'sess_abc123', tool_call_id: 'call_77', turn_id: 'turn_3' },
    });
  });

  it('blocks with action block and a non-empty message', () => {
    expect(parse(hermes.reply(pre, SAMPLE_DECISIONS.deny).stdout)).toEqual({
      action: 'block',
      message: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
    });
  });

  it('allows with the documented no-op {}', () => {
    expect(hermes.reply(pre, SAMPLE_DECISIONS.allow)).toEqual({ exitCode: 0, stdout: '{}', stderr: '' });
  });

  it('escalates require_approval to the Hermes approval gate, naming the approval id', () => {
    const out = parse(hermes.reply(pre, SAMPLE_DECISIONS.require_approval).stdout);
    expect(out).toMatchObject({ action: 'approve' });
    expect(JSON.stringify(out)).toContain('apr_01JCASEAPPROVAL0000000000');
  });

  it('rewrites with action modify when the new input keeps every field', () => {
    expect(parse(hermes.reply(pre, SAMPLE_DECISIONS.modify).stdout)).toEqual({
      action: 'modify',
      args: { command: 'echo safe' },
    });
  });

  it('blocks a modify that would remove a field, because a shallow merge cannot delete it', () => {
    const n = hermes.normalize({ ...fixture('pre_tool_call'), tool_input: { command: 'x', cwd: '/etc' } });
    const out = parse(hermes.reply(n, SAMPLE_DECISIONS.modify).stdout) as { action: string; message: string };
    expect(out.action).toBe('block');
    expect(out.message).toContain('cwd');
  });

  it('blocks a defer with a reason that says it is deferred', () => {
    expect(hermes.reply(pre, SAMPLE_DECISIONS.defer).stdout).toContain('deferred');
  });

  it('records a post_tool_call that reports an error as agent.tool.failed', () => {
    const payload = fixture('post_tool_call');
    const n = hermes.normalize({
      ...payload,
      extra: { error_type: 'Timeout', error_message: 'took too long' },
    });
    expect(n.envelopes[0]?.type).toBe('agent.tool.failed');
  });

  it('answers malformed stdin with exit 2 and at most 400 characters of stderr', () => {
    const reply = hermes.errorReply('x'.repeat(1000));
    expect(reply.exitCode).toBe(2);
    expect(reply.stderr.length).toBe(400);
  });
});
