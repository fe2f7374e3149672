import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { codex } from './adapter.js';
import {
  approvalHook,
  approvalResult,
  isApprovalMethod,
  notificationHook,
  readRpc,
  verdictOf,
} from './app-server.js';

// biome-ignore lint/suspicious/noExplicitAny: reads of recorded protocol JSON in assertions
type J = any;

const session = (name: string) =>
  readFileSync(new URL(`./fixtures/app-server/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { from: string; message: Record<string, unknown> });

describe('Codex App Server mapping (recorded sessions)', () => {
  it('tells requests, notifications and responses apart (JSON-RPC without the jsonrpc field)', () => {
    expect(readRpc('{"method":"turn/start","id":30,"params":{"threadId":"thr_123"}}')).toMatchObject({
      kind: 'request',
      id: 30,
    });
    expect(readRpc('{"method":"initialized"}')).toEqual({
      kind: 'notification',
      method: 'initialized',
      params: {},
    });
    expect(readRpc('{"id":30,"result":{"turn":{}}}')).toEqual({ kind: 'response', id: 30 });
    expect(readRpc('not json')).toEqual({ kind: 'other' });
  });

  it('turns a v2 command approval into a codex hook the gate decides, normalized as a Bash permission request', () => {
    const request = session('command-rm.jsonl').find(
      (e) => e.message.method === 'item/commandExecution/requestApproval',
    )!;
    const hook = approvalHook(
      'item/commandExecution/requestApproval',
      request.message.params as Record<string, unknown>,
    );
    const n = codex.normalize(new TextEncoder().encode(JSON.stringify(hook)));
    expect(n.problem).toBeUndefined();
    expect(n.intent).toMatchObject({
      tool: 'Bash',
      input: { command: 'rm -rf build', cwd: '/Users/me/project' },
    });
    expect(n.envelopes[0]?.type).toBe('agent.permission.requested');
    expect(n.sessionId).toBe('019ad7c1-3f0e-7a42-9b1d-6c2e8f4a1b01');
    expect(n.classified?.kind).toBe('shell');
  });

  it('takes a v2 file change diff from the item/started that announced it', () => {
    const entries = session('file-change.jsonl');
    const started = entries.find((e) => e.message.method === 'item/started')!.message.params as J;
    const request = entries.find((e) => e.message.method === 'item/fileChange/requestApproval')!.message
      .params as J;
    const hook = approvalHook('item/fileChange/requestApproval', request, started.item) as J;
    expect(hook.tool_name).toBe('apply_patch');
    expect(hook.tool_input.paths).toEqual(['/Users/me/project/src/config.ts']);
    expect(hook.tool_input.command).toContain('+export const RETRIES = 5;');
  });

  it('maps the legacy v1 requests and answers them in their own words', () => {
    const exec = approvalHook('execCommandApproval', {
      conversationId: '67e55044-10b1-426f-9247-bb680e5fe0c8',
      callId: 'call-42',
      command: ['echo', 'hello'],
      cwd: '/tmp',
      reason: 'because tests',
    }) as J;
    expect(exec).toMatchObject({
      session_id: '67e55044-10b1-426f-9247-bb680e5fe0c8',
      tool_use_id: 'call-42',
    });
    expect(exec.tool_input).toEqual({ command: 'echo hello', cwd: '/tmp', description: 'because tests' });
    const patch = approvalHook('applyPatchApproval', {
      conversationId: 'c',
      callId: 'p',
      fileChanges: { 'a.txt': { type: 'update', unified_diff: '-a\n+b\n' } },
    }) as J;
    expect(patch.tool_input.paths).toEqual(['a.txt']);
    expect(approvalResult('execCommandApproval', true)).toEqual({ decision: 'approved' });
    expect(approvalResult('applyPatchApproval', false)).toEqual({ decision: 'denied' });
    expect(approvalResult('item/fileChange/requestApproval', true)).toEqual({ decision: 'accept' });
    expect(approvalResult('item/commandExecution/requestApproval', false)).toEqual({ decision: 'decline' });
    expect(isApprovalMethod('item/permissions/requestApproval')).toBe(false);
  });

  it("reads the route's permission reply: allow → accept, deny → decline, neutral → the client, exit 2 → decline", () => {
    const reply = (decision?: unknown) => ({
      exitCode: 0,
      stdout: JSON.stringify(decision ? { hookSpecificOutput: { hookEventName: 'x', decision } } : {}),
      stderr: '',
    });
    expect(verdictOf(reply({ behavior: 'allow' }))).toEqual({ kind: 'accept' });
    expect(verdictOf(reply({ behavior: 'deny', message: 'NO_RM_RF' }))).toEqual({
      kind: 'decline',
      reason: 'NO_RM_RF',
    });
    expect(verdictOf(reply())).toEqual({ kind: 'client' });
    expect(verdictOf({ exitCode: 2, stdout: '', stderr: 'switchboard: bad' })).toEqual({
      kind: 'decline',
      reason: 'switchboard: bad',
    });
  });

  it('posts threads, turns and tool items; deltas, messages and token usage are not posted', () => {
    const posted = session('command-deploy.jsonl')
      .filter((e) => e.from === 'server' && e.message.id === undefined)
      .map((e) => notificationHook(String(e.message.method), e.message.params as Record<string, unknown>))
      .filter((h) => h !== undefined)
      .map((h) => h.hook_event_name);
    expect(posted).toEqual([
      'thread/started',
      'turn/started',
      'item/started',
      'item/completed',
      'turn/completed',
    ]);
    for (const e of session('command-deploy.jsonl').filter(
      (x) => x.from === 'server' && x.message.id === undefined,
    )) {
      const hook = notificationHook(String(e.message.method), e.message.params as Record<string, unknown>);
      if (!hook) continue;
      const n = codex.normalize(new TextEncoder().encode(JSON.stringify(hook)));
      expect(n.problem).toBeUndefined();
      expect(n.intent).toBeUndefined();
    }
  });

  it('records a declined tool item as agent.tool.failed and a failed turn as agent.turn.failed', () => {
    const declined = notificationHook('item/completed', {
      threadId: 't',
      turnId: '0',
      item: { type: 'commandExecution', id: 'call_1', command: 'rm -rf build', status: 'declined' },
    });
    expect(codex.normalize(new TextEncoder().encode(JSON.stringify(declined))).envelopes[0]?.type).toBe(
      'agent.tool.failed',
    );
    const failed = notificationHook('turn/completed', {
      threadId: 't',
      turn: { id: '0', status: 'failed', error: { message: 'stream disconnected' } },
    });
    expect(failed?.hook_event_name).toBe('turn/failed');
    expect(codex.normalize(new TextEncoder().encode(JSON.stringify(failed))).envelopes[0]?.type).toBe(
      'agent.turn.failed',
    );
  });
});
