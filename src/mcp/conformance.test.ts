import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/index.js';
import { deliveryModule } from '../delivery/module.js';
import { notifyModule } from '../notify/module.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { mcpModule } from './module.js';

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against our `/mcp`, for the
 * server scenarios that apply to a server with our two tools and no resources, prompts, logging or
 * completions: the handshake, ping, tools/list, and DNS-rebinding protection (issue #22, class 10).
 *
 * The suite needs Node 22 (`fs.globSync`); the gateway runs on Node 20. So it runs as its own process
 * under Node 22 from the npm registry's `node` package, through npx, pinned. Its client sends no
 * credentials, so a loopback forwarder adds the agent key and passes everything else, Host and Origin
 * included, unchanged: what the gateway validates is what the suite sent.
 *
 * Skipped when npx cannot fetch those packages (no registry); `SWITCHBOARD_REQUIRE_CONFORMANCE=1`
 * (set in .ci/run) turns that into a failure.
 */

const NODE = 'node@22.23.3';
const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const;
const REQUIRED = process.env.SWITCHBOARD_REQUIRE_CONFORMANCE === '1';

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

function npx(args: string[], timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['--yes', '-p', NODE, '-p', SUITE, ...args],
      {
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, npm_config_update_notifier: 'false' },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

/** Adds the bearer key the suite cannot send; method, path, Host, Origin and body pass as they came. */
function forwarder(target: number): Promise<Server> {
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: '127.0.0.1',
        port: target,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${KEYS.agent}` },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// Fetched (once, then from npx's cache) before the tests are collected, so a missing registry skips them.
const probe = await npx(['-c', 'node --version'], 240_000);
const available = probe.code === 0 && /^v22\./m.test(probe.out);
if (!available && REQUIRED)
  throw new Error(`npx could not run ${NODE} with ${SUITE}:\n${probe.out.slice(-2000)}`);

let gw: TestGateway;
let proxy: Server;
let out: string;

beforeAll(async () => {
  if (!available) return;
  gw = await testGateway({
    dialect: 'sqlite',
    config: { auth: { keys: [{ name: 'bot', role: 'agent', key: KEYS.agent }] } },
    modules: [coreModule(), deliveryModule({ env: {} }), approvalsModule(), notifyModule(), mcpModule()],
  });
  proxy = await forwarder(gw.gateway.port);
  out = mkdtempSync(join(tmpdir(), 'sb-conformance-'));
}, 300_000);

afterAll(async () => {
  await new Promise((r) => (proxy ? proxy.close(r) : r(undefined)));
  await gw?.stop();
  if (out) rmSync(out, { recursive: true, force: true });
});

describe.skipIf(!available)('the MCP conformance suite against /mcp', () => {
  it.each(SCENARIOS)(
    'passes %s',
    async (scenario) => {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
      const dir = join(out, scenario);
      const run = await npx(
        ['-c', `conformance server --url ${url} --scenario ${scenario} -o ${dir}`],
        120_000,
      );
      const file = readdirSync(dir, { recursive: true, encoding: 'utf8' }).find((f) =>
        f.endsWith('checks.json'),
      );
      expect(file, run.out.slice(-3000)).toBeDefined();
      const checks = JSON.parse(readFileSync(join(dir, file!), 'utf8')) as Check[];
      const failed = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage}`);
      console.log(`conformance ${scenario}: ${checks.map((c) => `${c.id} ${c.status}`).join(', ')}`);
      expect(failed).toEqual([]);
      expect(checks.some((c) => c.status === 'SUCCESS')).toBe(true);
      expect(run.code, run.out.slice(-3000)).toBe(0);
    },
    180_000,
  );
});
