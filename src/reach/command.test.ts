import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReachApp, reachApp, script } from './testing.js';

/** `command` tools with real scripts: argv from config only, params on stdin, a clean environment, group kill. */

const anything = { type: 'object', properties: { text: { type: 'string' } } };

/** Running, as opposed to gone or a zombie waiting for a parent (or init) that does not reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

describe('command tools', () => {
  const echo = script('printf \'{"argc":%s,"stdin":%s}\' "$#" "$(cat)"');
  const env = script('env | sort | sed \'s/=.*//\' | tr "\\n" " "');
  const fail = script('echo "cannot reach db as admin password=s3cr3tvalue; call 13800138000" >&2; exit 3');
  const spawner = script(`sleep 30 & echo $! > "$(dirname "$0")/child.pid"; wait`);
  const lines = script('echo one; sleep 0.05; echo two 13912345678; sleep 0.05; echo three');
  let r: ReachApp;
  beforeAll(async () => {
    r = await reachApp({
      config: {
        tools: {
          'cmd.echo': { kind: 'command', input_schema: anything, command: [echo.path, 'fixed-arg'] },
          'cmd.env': {
            kind: 'command',
            input_schema: anything,
            command: { argv: [env.path], env: { MODE: 'report', SECRET_env: 'PASSED_SECRET' } },
          },
          'cmd.fail': { kind: 'command', input_schema: anything, command: [fail.path] },
          'cmd.spawner': {
            kind: 'command',
            timeout_ms: 300,
            input_schema: anything,
            command: [spawner.path],
          },
          'cmd.lines': {
            kind: 'command',
            input_schema: anything,
            command: [lines.path],
            redact: ['cn_mobile'],
          },
          'cmd.missing': { kind: 'command', input_schema: anything, command: ['/nonexistent/tool'] },
          'report.build': { kind: 'command', channel: 'async', input_schema: anything, command: [echo.path] },
        },
      },
      env: { PASSED_SECRET: 'given', SB_TEST_LEAK: 'must-not-appear' },
    });
  });
  afterAll(async () => {
    await r.cleanup();
    for (const s of [echo, env, fail, spawner, lines]) s.cleanup();
  });

  it('passes params as JSON on stdin and never as arguments', async () => {
    const evil = '"; rm -rf / #';
    const { body } = await r.touch({ tool_name: 'cmd.echo', params: { text: evil } });
    expect(body.data).toEqual({ argc: 1, stdin: { text: evil } });
  });

  it('runs in a clean environment: PATH, LANG and what the tool lists, nothing of the gateway', async () => {
    const { body } = await r.touch({ tool_name: 'cmd.env', params: {} });
    const names = String(body.data).trim().split(' ');
    expect(names).toEqual(expect.arrayContaining(['LANG', 'MODE', 'PATH', 'SECRET']));
    expect(names).not.toContain('SB_TEST_LEAK');
    expect(names).not.toContain('HOME');
  });

  it('reports a non-zero exit with its status and a secret-free stderr excerpt', async () => {
    const { body } = await r.touch({ tool_name: 'cmd.fail', params: {} });
    const e = body.error as { code: string; details: { status: number; excerpt: string } };
    expect(e.code).toBe('TOOL_FAILED');
    expect(e.details.status).toBe(3);
    expect(e.details.excerpt).toContain('cannot reach db');
    expect(e.details.excerpt).not.toContain('s3cr3tvalue');
    expect(e.details.excerpt).not.toContain('13800138000');
  });

  it('kills the whole process group at the deadline, children included', async () => {
    const { status, body } = await r.touch({ tool_name: 'cmd.spawner', params: {} });
    expect(status).toBe(504);
    expect(body.error).toMatchObject({ code: 'TIMEOUT', details: { timeout_ms: 300 } });
    const child = Number(readFileSync(join(spawner.dir, 'child.pid'), 'utf8'));
    for (let i = 0; i < 20 && alive(child); i++) await sleep(25);
    expect(alive(child)).toBe(false);
  });

  it('answers TOOL_FAILED for a command that does not exist', async () => {
    const { body } = await r.touch({ tool_name: 'cmd.missing', params: {} });
    expect(body.error).toMatchObject({ code: 'TOOL_FAILED', message: 'the command was not found' });
  });

  it('streams stdout lines as partials on the stream channel', async () => {
    const res = await r.t.app.request('/v1/touch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer agent-key-0123456789abcdef' },
      body: JSON.stringify({ tool_name: 'cmd.lines', params: {}, channel: 'stream' }),
    });
    const text = await res.text();
    const partials = [...text.matchAll(/event: partial\ndata: (.*)\n/g)].map(
      (m) => (JSON.parse(m[1]!) as { text: string }).text,
    );
    expect(partials).toEqual(['one', 'two [redacted:cn_mobile]', 'three']);
    expect(text).toContain('event: result');
  });

  it('refuses sync for a tool declared async, with the hint, and runs it async with a job id', async () => {
    const refused = await r.touch({ tool_name: 'report.build', params: {}, channel: 'sync' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'INVALID_PARAMS',
      details: { problems: [{ path: 'channel' }] },
    });
    expect((refused.body.error as { message: string }).message).toContain('channel: "async"');

    const accepted = await r.touch({ tool_name: 'report.build', params: { text: 'q3' }, channel: 'async' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ ok: true, status: 'running' });
    const id = String(accepted.body.request_id);
    let got = await r.get(`/v1/touch/${id}`);
    for (let i = 0; i < 100 && got.body.status === 'running'; i++) {
      await sleep(20);
      got = await r.get(`/v1/touch/${id}`);
    }
    expect(got.body).toMatchObject({ ok: true, status: 'done', data: { argc: 0, stdin: { text: 'q3' } } });
    // A GET never changes state: asked again, the same answer.
    expect((await r.get(`/v1/touch/${id}`)).body).toEqual(got.body);
    // Another key does not see it.
    expect((await r.get(`/v1/touch/${id}`, 'admin')).status).toBe(404);
  });
});
