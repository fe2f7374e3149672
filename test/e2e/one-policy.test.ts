import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, requireBuild } from '../../src/cli/testing.js';
import { RUNTIMES } from '../../src/runtimes/index.js';
import type { RuntimeKind } from '../../src/runtimes/runtime.js';
import { parseConfig } from '../../src/server/config.js';
import { type RunningServer, startServer } from '../../src/server/serve.js';
import { auth, KEYS, type TestApp, testApp } from '../../src/server/testing.js';
import { dialects } from '../../src/store/testing.js';

/**
 * Issue 17's first promise: one rule, written once in canonical terms, denies `git push --force` in
 * all six runtimes — over HTTP (the route each runtime's hook reaches) and through the command bridge
 * (`switchboard hook <runtime>`, the compiled bundle a runtime spawns) — with every module real.
 */
const RULES = [
  {
    id: 'no-force-push',
    when: 'kind == "shell" && args.command.contains("push --force")',
    decision: 'deny',
    reason_code: 'FORCE_PUSH',
  },
];

/** Each runtime's recorded shell call (`fixtures/kinds/shell.json`), every one a force push. */
const shell = (runtime: RuntimeKind) =>
  readFileSync(join(ROOT, `src/runtimes/${runtime}/fixtures/kinds/shell.json`), 'utf8');
const RUNTIME_LIST = Object.keys(RUNTIMES) as RuntimeKind[];
const denyFor = (runtime: RuntimeKind, raw: string) => {
  const adapter = RUNTIMES[runtime];
  return adapter.reply(adapter.normalize(raw), { decision: 'deny', reason_code: 'FORCE_PUSH' });
};
const withCommand = (raw: string, from: string, to: string) => raw.replaceAll(from, to);

describe.each(await dialects())('one canonical rule over HTTP on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ dialect, config: { rules: RULES } });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const hook = (runtime: RuntimeKind, body: string) =>
    t.app.request(`/v1/runtimes/${runtime}/hooks`, {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body,
    });

  it.each(RUNTIME_LIST)('denies the force push from %s in its native reply', async (runtime) => {
    const raw = shell(runtime);
    const res = await hook(runtime, raw);
    expect(res.status).toBe(200);
    const expected = denyFor(runtime, raw);
    const body = await res.json();
    expect(body).toEqual(
      expected.httpBody ?? { exitCode: expected.exitCode, stdout: expected.stdout, stderr: expected.stderr },
    );
    expect(JSON.stringify(body)).toContain('FORCE_PUSH');
  });

  it.each(RUNTIME_LIST)('leaves an ordinary push from %s to the runtime', async (runtime) => {
    const raw = withCommand(shell(runtime), 'push --force', 'push');
    const res = await hook(runtime, raw);
    const adapter = RUNTIMES[runtime];
    const neutral = adapter.reply(adapter.normalize(raw), null);
    const body = await res.json();
    expect(body).toEqual(neutral.httpBody ?? { exitCode: 0, stdout: neutral.stdout, stderr: '' });
  });

  it('records the kind in the subject of the request and of the denial', async () => {
    const denied = await t.services.log.list({ type: 'agent.tool.denied', limit: 100 });
    expect(denied.length).toBeGreaterThanOrEqual(RUNTIME_LIST.length);
    for (const e of denied) expect(e.envelope.subject.kind).toBe('shell');
    const requested = await t.services.log.list({ type: 'agent.tool.requested', limit: 100 });
    expect(new Set(requested.map((e) => e.envelope.runtime.kind))).toEqual(new Set(RUNTIME_LIST));
    for (const e of requested) expect(e.envelope.subject.kind).toBe('shell');
  });

  it('classifies a runtime’s own tool name given to POST /v1/gate/evaluate without a kind', async () => {
    const res = await t.app.request('/v1/gate/evaluate', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify({
        tool: 'run_shell_command',
        input: { command: 'git push --force' },
        runtime: 'gemini-cli',
      }),
    });
    expect(((await res.json()) as { decision: string }).decision).toBe('deny');
  });
});

const ENTRIES = [join(ROOT, 'dist/hook/entry.js'), join(ROOT, 'dist/hook.mjs')].filter((p) => existsSync(p));

function bridge(entry: string, runtime: string, input: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [entry, runtime], {
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

let home: string;
let server: RunningServer;

describe('one canonical rule through the bridge', () => {
  beforeAll(async () => {
    requireBuild();
    home = mkdtempSync(join(tmpdir(), 'sb-one-policy-'));
    const config = parseConfig({
      data_dir: join(home, 'data'),
      server: { port: 0 },
      auth: { keys: [{ name: 'bot', role: 'agent', key: KEYS.agent }] },
      rules: RULES,
    });
    server = await startServer(config, { logger: pino({ level: 'silent' }), env: {}, defaultMetrics: false });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('has a compiled bridge to run', () => {
    expect(ENTRIES.length).toBeGreaterThan(0);
  });

  for (const entry of ENTRIES) {
    it.each(RUNTIME_LIST)(`denies the force push from %s (${entry.slice(ROOT.length)})`, async (runtime) => {
      const raw = shell(runtime);
      const r = await bridge(entry, runtime, raw, {
        SWITCHBOARD_URL: server.url,
        SWITCHBOARD_KEY: KEYS.agent,
      });
      const expected = denyFor(runtime, raw);
      expect(r.code).toBe(expected.exitCode);
      expect(r.stdout.trim()).toBe(expected.stdout);
      expect(r.stdout + r.stderr).toContain('FORCE_PUSH');
    });
  }
});
