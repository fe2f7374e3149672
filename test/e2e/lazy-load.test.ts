import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild } from '../../src/cli/testing.js';

/**
 * Issue 13's idle memory: what a gateway no one has called yet must not have loaded, and the first
 * request that needs a lazy part loads it and is answered. A preload logs every module file the
 * compiled gateway loads (ESM through a load hook, CommonJS through `_compile`).
 */

const AGENT_KEY = 'agent-key-for-the-lazy-load-test';
const SKILL =
  "let i=''; process.stdin.on('data', d => i += d); process.stdin.on('end', () => process.exit(0));";

const CONFIG = `data_dir: ./data
server: { host: 127.0.0.1 }
tenant: { id: default, environment: test }
auth:
  keys:
    - { name: bot, role: agent, key_env: SB_AGENT_KEY }
a2a:
  skills:
    - id: quick
      name: Quick
      description: Ends at once
      action: { type: command, command: ['${process.execPath}', '-e', "${SKILL}"] }
`;

const preload = (log: string) => `import Module, { register } from 'node:module';
import { appendFileSync } from 'node:fs';
const hook = \`import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\\\n'); return next(url, context); }\`;
register('data:text/javascript,' + encodeURIComponent(hook));
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  appendFileSync(${JSON.stringify(log)}, 'file://' + filename + '\\n');
  return compile.call(this, content, filename);
};
`;

/** Loaded only when something needs them: none of them at an idle start with this config. */
const LAZY = {
  'the A2A SDK root (its codecs, and jose for card signatures)': '/@a2a-js/sdk/dist/index.js',
  jose: '/node_modules/jose/',
  'the A2A SDK server side': '/@a2a-js/sdk/dist/server/',
  'the A2A SDK v0.3 compat server': '/@a2a-js/sdk/dist/compat/v0_3/server/',
  'the A2A SDK client': '/@a2a-js/sdk/dist/client/',
  undici: '/node_modules/undici/',
  liquidjs: '/node_modules/liquidjs/',
  linkifyjs: '/node_modules/linkifyjs/',
  'the MCP SDK': '/@modelcontextprotocol/sdk/',
  pg: '/node_modules/pg/',
  'the console pages': '/dist/console/pages.js',
  'commander (serve parses its own options)': '/node_modules/commander/',
  'the CLI program': '/dist/cli/program.js',
};

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('an idle gateway', () => {
  let dir: string;
  let log: string;
  let child: ChildProcess;
  let url: string;
  const loaded = () => readFileSync(log, 'utf8');

  beforeAll(async () => {
    requireBuild();
    dir = mkdtempSync(join(tmpdir(), 'sb-lazy-'));
    log = join(dir, 'loads.txt');
    writeFileSync(log, '');
    writeFileSync(join(dir, 'switchboard.yaml'), CONFIG);
    writeFileSync(join(dir, 'preload.mjs'), preload(log));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(
      process.execPath,
      ['--import', join(dir, 'preload.mjs'), CLI, 'serve', '--port', String(port)],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          SB_AGENT_KEY: AGENT_KEY,
          SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 9).toString('base64'),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20_000);
      child.stderr!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('switchboard ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited ${code} before it was ready: ${out}`));
      });
    });
  }, 30_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('has loaded none of the parts only a first request needs', () => {
    const files = loaded();
    expect(files).toContain('/dist/a2a/module.js'); // the log works
    for (const [part, path] of Object.entries(LAZY)) expect(files.includes(path), part).toBe(false);
  });

  it('loads the A2A SDK server side with the first JSON-RPC request and answers it', async () => {
    const res = await fetch(`${url}/a2a`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${AGENT_KEY}`,
        'content-type': 'application/json',
        'a2a-version': '1.0',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'go' }] },
          configuration: { returnImmediately: true },
        },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result?: { task?: { id?: string } }; error?: unknown };
    expect(body.error).toBeUndefined();
    expect(body.result?.task?.id).toEqual(expect.any(String));
    expect(loaded()).toContain(LAZY['the A2A SDK server side']);
    expect(loaded()).toContain(LAZY['the A2A SDK root (its codecs, and jose for card signatures)']);
  });

  it('loads the console pages with the first request to /console and answers it', async () => {
    expect(loaded()).not.toContain(LAZY['the console pages']);
    const inbox = await fetch(`${url}/console/`, { headers: { accept: 'text/html' } });
    expect(inbox.status).toBe(200); // no session: the sign-in page
    expect(inbox.headers.get('content-type')).toContain('text/html');
    const page = await fetch(`${url}/console/login`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(loaded()).toContain(LAZY['the console pages']);
    const missing = await fetch(`${url}/console/no-such-page`);
    expect(missing.status).toBe(404);
  });
});
