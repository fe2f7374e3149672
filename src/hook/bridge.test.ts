import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, requireBuild } from '../cli/testing.js';
import { parseConfig } from '../server/config.js';
import { FakeGate, gateDecision } from '../runtimes/http/testing.js';
import { START_GATEWAY_HINT, unavailableDecision } from '../runtimes/http/fail-closed.js';
import { RUNTIMES } from '../runtimes/index.js';
import { runtimesModule } from '../runtimes/module.js';
import type { RuntimeKind } from '../runtimes/runtime.js';
import { coreModule } from '../server/core-routes.js';
import { type RunningServer, startServer } from '../server/serve.js';
import { gatePort } from '../gate/port.js';

/** The compiled bridge, as a runtime runs it: tsc's output always, the esbuild bundle when built. */
const ENTRIES = [join(ROOT, 'dist/hook/entry.js'), join(ROOT, 'dist/hook.mjs')].filter((p) => existsSync(p));
const KEY = 'bridge-test-agent-key-0123456789';
const fixture = (runtime: string, event: string) =>
  readFileSync(join(ROOT, `src/runtimes/${runtime}/fixtures/${event}.json`), 'utf8');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function bridge(entry: string, args: string[], input: string, env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const child = spawn(process.execPath, [entry, ...args], {
      // No inherited SWITCHBOARD_* and no real ~/.config: every setting comes from the test.
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
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - start }));
    child.stdin.end(input);
  });
}

let home: string;
let server: RunningServer;
let gate: FakeGate;
let deadUrl: string;
let hanging: ReturnType<typeof createTcpServer>;
let hangingUrl: string;
const sockets: Socket[] = [];
let failing: Server;
let failingUrl: string;

async function listen(s: Server | ReturnType<typeof createTcpServer>): Promise<string> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  requireBuild();
  home = mkdtempSync(join(tmpdir(), 'sb-bridge-'));
  const config = parseConfig({
    data_dir: join(home, 'data'),
    server: { port: 0 },
    auth: { keys: [{ name: 'bot', role: 'agent', key: KEY }] },
  });
  server = await startServer(config, {
    modules: [coreModule(), runtimesModule()],
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
  });
  gate = new FakeGate(gateDecision('deny', { reason_code: 'FORCE_PUSH', reason: 'no force pushes' }));
  server.kernel.ports.set(gatePort, gate);

  const closed = createTcpServer();
  deadUrl = await listen(closed);
  await new Promise((r) => closed.close(r));

  hanging = createTcpServer((socket) => sockets.push(socket));
  hangingUrl = await listen(hanging);

  failing = createServer((_req, res) => res.writeHead(503).end('{"error":{"code":"store_unavailable"}}'));
  failingUrl = await listen(failing);
}, 30_000);

afterAll(async () => {
  for (const s of sockets) s.destroy();
  hanging?.close();
  failing?.close();
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('the bridge stays small', () => {
  it('imports only node: modules, the adapters, its own folder and the gate’s import-free tool list', () => {
    const dir = join(ROOT, 'src/hook');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      for (const [, spec] of text.matchAll(/^import (?!type )[^'"]*['"]([^'"]+)['"]/gm)) {
        expect(spec, `${file} imports ${spec}`).toMatch(
          /^(node:|\.\/|\.\.\/runtimes\/|\.\.\/gate\/read-only\.js$)/,
        );
      }
    }
    // The one file the bridge takes from the gate (READ_ONLY_TOOLS) must itself import nothing.
    expect(readFileSync(join(ROOT, 'src/gate/read-only.ts'), 'utf8')).not.toMatch(/^import /m);
    if (existsSync(join(ROOT, 'dist/hook.mjs'))) {
      const bundle = readFileSync(join(ROOT, 'dist/hook.mjs'), 'utf8');
      for (const [, spec] of bundle.matchAll(/^import [^'"]*['"]([^'"]+)['"]/gm))
        expect(spec).toMatch(/^node:/);
      // No npm package is bundled: the envelope's JSON Schema validator and its Ajv, which came in
      // through the envelope barrel, were a third of the bridge's start-up.
      const packages = new Set([...bundle.matchAll(/^\/\/ node_modules\/([^/]+)\//gm)].map((m) => m[1]));
      expect([...packages]).toEqual([]);
    }
  });
});

describe.each(ENTRIES)('the bridge %s', (entry) => {
  const live = () => ({ SWITCHBOARD_URL: server.url, SWITCHBOARD_KEY: KEY });

  it('writes Claude Code the gate deny, exit 0, with the reason', async () => {
    const raw = fixture('claude-code', 'PreToolUse');
    const r = await bridge(entry, ['claude-code'], raw, live());
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(out.hookSpecificOutput.permissionDecisionReason).toContain('FORCE_PUSH');
    const expected = RUNTIMES['claude-code'].reply(RUNTIMES['claude-code'].normalize(raw), {
      decision: 'deny',
      reason_code: 'FORCE_PUSH',
      reason: 'no force pushes',
    });
    expect(r.stdout.trim()).toBe(expected.stdout);
  });

  it('writes Codex the exact `{}` for an allow', async () => {
    gate.answer = gateDecision('allow');
    try {
      const r = await bridge(entry, ['codex'], fixture('codex', 'PreToolUse'), live());
      expect(r).toMatchObject({ code: 0, stdout: '{}\n', stderr: '' });
    } finally {
      gate.answer = gateDecision('deny', { reason_code: 'FORCE_PUSH', reason: 'no force pushes' });
    }
  });

  it("records Codex's notify JSON given as the last argument, without reading stdin", async () => {
    const before = await server.services.log.list({ type: 'agent.turn.completed', limit: 100 });
    const r = await bridge(entry, ['codex', fixture('codex', 'agent-turn-complete')], '', live());
    expect(r.code).toBe(0);
    const after = await server.services.log.list({ type: 'agent.turn.completed', limit: 100 });
    expect(after.length).toBe(before.length + 1);
  });

  it('answers malformed stdin with the native error: exit 2 and a reason on stderr', async () => {
    const r = await bridge(entry, ['hermes'], '{"hook_event_name": ', live());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not valid JSON');
  });

  it('refuses an unknown runtime with exit 2', async () => {
    const r = await bridge(entry, ['nope'], fixture('claude-code', 'PreToolUse'), live());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown runtime');
  });

  const blocking: Array<[RuntimeKind, string]> = [
    ['claude-code', 'PreToolUse'],
    ['codex', 'PreToolUse'],
    ['hermes', 'pre_tool_call'],
    ['gemini-cli', 'BeforeTool'],
    ['cursor', 'beforeShellExecution'],
  ];

  it.each(blocking)(
    'fails %s %s closed when no gateway listens: the desk dialog where the runtime has one, else its deny, saying how to start the gateway',
    async (runtime, event) => {
      const raw = fixture(runtime, event);
      const r = await bridge(entry, [runtime], raw, { SWITCHBOARD_URL: deadUrl, SWITCHBOARD_KEY: KEY });
      const adapter = RUNTIMES[runtime];
      const expected = adapter.reply(
        adapter.normalize(raw),
        unavailableDecision(
          `Switchboard gateway unreachable at ${deadUrl}: connect ECONNREFUSED ${deadUrl.slice(7)}; ${START_GATEWAY_HINT}`,
        ),
      );
      if (runtime === 'claude-code') expect(r.stdout).toContain('"permissionDecision":"ask"');
      expect(r.stdout).toContain('switchboard serve');
      expect(r.code).toBe(expected.exitCode);
      expect(r.stdout.trim()).toBe(expected.stdout);
      expect(r.stdout).toContain('GATE_UNAVAILABLE');
      expect(r.stdout).toContain('unreachable at');
    },
  );

  it('lets a read-only tool and an observed event through when no gateway listens', async () => {
    const env = { SWITCHBOARD_URL: deadUrl, SWITCHBOARD_KEY: KEY };
    const read = JSON.stringify({
      hook_event_name: 'PreToolUse',
      tool_name: 'Grep',
      tool_input: { pattern: 'x' },
    });
    expect(await bridge(entry, ['claude-code'], read, env)).toMatchObject({ code: 0, stdout: '' });
    const post = await bridge(entry, ['claude-code'], fixture('claude-code', 'PostToolUse'), env);
    expect(post).toMatchObject({ code: 0, stdout: '' });
  });

  it('fails open when SWITCHBOARD_HOOK_FAIL=open, and when hook.json says so', async () => {
    const raw = fixture('claude-code', 'PreToolUse');
    const env = { SWITCHBOARD_URL: deadUrl, SWITCHBOARD_KEY: KEY };
    expect(
      await bridge(entry, ['claude-code'], raw, { ...env, SWITCHBOARD_HOOK_FAIL: 'open' }),
    ).toMatchObject({
      code: 0,
      stdout: '',
    });
    const dir = join(home, '.config', 'switchboard');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'hook.json'), JSON.stringify({ fail: 'open' }));
    try {
      expect((await bridge(entry, ['claude-code'], raw, env)).stdout).toBe('');
      // The environment wins over the file.
      const closed = await bridge(entry, ['claude-code'], raw, { ...env, SWITCHBOARD_HOOK_FAIL: 'closed' });
      expect(closed.stdout).toContain('"ask"');
    } finally {
      rmSync(join(dir, 'hook.json'));
    }
  });

  it('gives up on a gateway that hangs after its own timeout, and fails closed', async () => {
    const raw = fixture('claude-code', 'PreToolUse');
    const r = await bridge(entry, ['claude-code'], raw, {
      SWITCHBOARD_URL: hangingUrl,
      SWITCHBOARD_KEY: KEY,
      SWITCHBOARD_HOOK_TIMEOUT_MS: '1000',
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"ask"');
    expect(r.stdout).toContain('no answer within 1000 ms');
    expect(r.ms).toBeLessThan(8000);
  }, 15_000);

  it('fails closed on a 5xx answer, and on a key the gateway refuses', async () => {
    const raw = fixture('gemini-cli', 'BeforeTool');
    const five = await bridge(entry, ['gemini-cli'], raw, {
      SWITCHBOARD_URL: failingUrl,
      SWITCHBOARD_KEY: KEY,
    });
    expect(JSON.parse(five.stdout)).toMatchObject({ decision: 'deny' });
    expect(five.stdout).toContain('answered 503');
    const refused = await bridge(entry, ['gemini-cli'], raw, {
      SWITCHBOARD_URL: server.url,
      SWITCHBOARD_KEY: 'wrong',
    });
    expect(refused.stdout).toContain('refused the hook: 401');
    const nokey = await bridge(entry, ['gemini-cli'], raw, { SWITCHBOARD_URL: server.url });
    expect(nokey.stdout).toContain('SWITCHBOARD_KEY is not set');
  });
});
