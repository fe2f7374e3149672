import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { toResult } from '../../../integrations/openclaw/gateway.js';
import { SAMPLE_DECISIONS, runtimeCase } from '../runtime.case.js';
import { openclaw } from './adapter.js';

const fixturesDir = fileURLToPath(new URL('./fixtures', import.meta.url));
const fixture = (event: string): Record<string, unknown> =>
  JSON.parse(readFileSync(`${fixturesDir}/${event}.json`, 'utf8'));

// OpenClaw's BeforeToolCallResult minus callbacks (reference/runtimes.md §4.1).
const BEFORE_TOOL_CALL = [
  'block',
  'blockReason',
  'params.*',
  'requireApproval.title',
  'requireApproval.description',
  'requireApproval.severity',
  'requireApproval.timeoutMs',
  'requireApproval.timeoutBehavior',
];

runtimeCase(openclaw, {
  fixturesDir,
  allowedKeys: (event) => (event === 'before_tool_call' ? BEFORE_TOOL_CALL : []),
});

describe('OpenClaw golden replies', () => {
  const before = openclaw.normalize(fixture('before_tool_call'));

  it('reads the intent, session, run and agent from event and ctx', () => {
    expect(before.intent).toEqual({ tool: 'exec', input: { command: 'git push --force origin main' } });
    expect(before.envelopes[0]).toMatchObject({
      actor: { agent_id: 'main' },
      execution: { session_id: 'ses_5f1c', turn_id: 'run_88', tool_call_id: 'tc_1' },
    });
  });

  it('blocks with block and blockReason', () => {
    expect(openclaw.reply(before, SAMPLE_DECISIONS.deny).httpBody).toEqual({
      block: true,
      blockReason: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
    });
  });

  it('allows with an empty result and rewrites with params', () => {
    expect(openclaw.reply(before, SAMPLE_DECISIONS.allow).httpBody).toEqual({});
    expect(openclaw.reply(before, SAMPLE_DECISIONS.modify).httpBody).toEqual({
      params: { command: 'echo safe' },
    });
  });

  it('asks through requireApproval that denies on timeout and names the approval id', () => {
    const body = openclaw.reply(before, SAMPLE_DECISIONS.require_approval).httpBody;
    expect(body).toMatchObject({
      requireApproval: {
        title: 'Switchboard approval required',
        severity: 'warning',
        timeoutBehavior: 'deny',
      },
    });
    expect(JSON.stringify(body)).toContain('apr_01JCASEAPPROVAL0000000000');
  });

  it('blocks a defer, which OpenClaw cannot park', () => {
    expect(openclaw.reply(before, SAMPLE_DECISIONS.defer).httpBody).toMatchObject({ block: true });
  });

  it('answers unreadable input with a block, since OpenClaw fails this hook closed', () => {
    expect(openclaw.reply(openclaw.normalize('{'), null).httpBody).toMatchObject({ block: true });
  });

  it('produces only bodies the plugin accepts unchanged, for every decision', () => {
    for (const d of [null, ...Object.values(SAMPLE_DECISIONS)]) {
      const body = openclaw.reply(before, d).httpBody;
      expect(toResult(body)).toEqual(body);
    }
  });

  it('records an after_tool_call with an error as agent.tool.failed', () => {
    const payload = fixture('after_tool_call');
    const n = openclaw.normalize({ ...payload, event: { toolName: 'exec', error: 'exit 1' } });
    expect(n.envelopes[0]?.type).toBe('agent.tool.failed');
  });
});
