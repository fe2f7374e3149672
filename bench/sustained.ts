import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from '@octokit/webhooks-methods';
import { fmt, line, type LoadResult, runLoader } from './stats.js';

/** bench/ is compiled to dist-bench/bench/, two levels below the repository root. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const AGENT_KEY = 'sb_bench-sustained-agent-0123456789';
const SECRET = 'bench-sustained-webhook-secret';
const PROBE_SECONDS = Number(process.env.BENCH_SUSTAINED_PROBE_SECONDS ?? 5);
const SECONDS = Number(process.env.BENCH_SUSTAINED_SECONDS ?? 60);
const SHARE = 0.7;
/** Connections per endpoint: enough for the probe to find the maximum, few enough to share 2 cores. */
const CONNECTIONS = 10;

interface Endpoint {
  name: string;
  path: string;
  body: string;
  headers: Record<string, string>;
  /** Header given a fresh value per request (a webhook's delivery id), so each one is new work. */
  fresh?: string;
}

/** One autocannon run per endpoint, all at once, each in its own process; `rate` 0 is unthrottled. */
const LOADER = `
const autocannon = require(process.env.AUTOCANNON);
const [url, body, headersJson, fresh, connections, duration, rate] = process.argv.slice(2);
let n = 0;
autocannon({
  url, connections: Number(connections), duration: Number(duration),
  ...(Number(rate) > 0 ? { overallRate: Number(rate) } : {}),
  requests: [{ method: 'POST', body, headers: JSON.parse(headersJson),
    setupRequest: (req) => {
      const i = n++;
      if (fresh) req.headers = { ...req.headers, [fresh]: 'sus-' + process.pid + '-' + i };
      // Same length as the placeholder: autocannon keeps the template's content-length.
      if (body.includes('__SESSION__')) req.body = body.replace('__SESSION__', 'sus-' + String(i % 50).padStart(7, '0'));
      return req;
    } }],
}, (err, r) => {
  if (err) { console.error(err); process.exit(1); }
  process.stdout.write(JSON.stringify({ ok: r['2xx'], non2xx: r.non2xx, errors: r.errors + r.timeouts, rps: r['2xx'] / (r.duration || Number(duration)), p50: r.latency.p50, p99: r.latency.p99 }));
});`;

async function endpoints(): Promise<Endpoint[]> {
  const examples = require('@octokit/webhooks-examples') as Array<{ name: string; examples: unknown[] }>;
  const push = JSON.stringify(examples.find((e) => e.name === 'push')?.examples[0]);
  const hook = readFileSync(join(ROOT, 'src/runtimes/claude-code/fixtures/PreToolUse.json'), 'utf8');
  const agent = { authorization: `Bearer ${AGENT_KEY}`, 'content-type': 'application/json' };
  return [
    {
      name: 'webhooks (signed 7 KB GitHub push)',
      path: '/v1/ingress/github',
      body: push,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-hub-signature-256': await sign(SECRET, push),
      },
      fresh: 'x-github-delivery',
    },
    {
      // Fifty sessions at once, as fifty agents would be: one session's hooks are decided in order.
      name: 'hooks (Claude Code PreToolUse, 50 sessions)',
      path: '/v1/runtimes/claude-code/hooks',
      body: hook.replace('"abc123"', '"__SESSION__"'),
      headers: agent,
    },
    {
      name: 'reports (POST /v1/progress)',
      path: '/v1/progress',
      body: JSON.stringify({ stage: 'progress', summary: 'sustained load: step done' }),
      headers: agent,
    },
  ];
}

/** A real `switchboard serve` on SQLite with the default durability (synchronous=FULL). */
async function gateway(dir: string): Promise<{ url: string; pid: number; stop: () => void }> {
  writeFileSync(
    join(dir, 'switchboard.yaml'),
    [
      'auth:',
      '  keys:',
      `    - { name: bench-agent, role: agent, key: ${AGENT_KEY} }`,
      'sources:',
      `  github: { type: github, secret: ${SECRET} }`,
      'notify: { progress_merge_window_seconds: 0, rate_per_minute: 0 }',
      // The hook's `npm test` is allowed by a rule: the row measures the decision, not a person's hold.
      'rules:',
      `  - { id: tests-run, when: 'kind == "shell" && args.command == "npm test"', decision: allow, reason_code: TESTS }`,
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'serve', '--port', '0'], {
    cwd: dir,
    env: { PATH: process.env.PATH, SWITCHBOARD_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (d: Buffer) => {
      // The log line "switchboard listening on <url>" (stdout), kept short: only the tail is searched.
      said = (said + d.toString()).slice(-4000);
      const m = /listening on (http:\/\/[\d.:]+)/.exec(said);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${said.slice(-400)}`)));
    setTimeout(() => reject(new Error(`serve did not listen in 20 s: ${said.slice(-400)}`)), 20_000).unref();
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  // Past start-up the logs are not read; keep draining them so the pipes never fill and block serve.
  child.stdout.removeAllListeners('data').resume();
  child.stderr.removeAllListeners('data').resume();
  return { url, pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

function loadAll(dir: string, url: string, eps: Endpoint[], seconds: number, rates: number[]) {
  return Promise.all(
    eps.map((e, i) => {
      const sub = mkdtempSync(join(dir, 'load-'));
      const args = [
        url + e.path,
        e.body,
        JSON.stringify(e.headers),
        e.fresh ?? '',
        String(CONNECTIONS),
        String(seconds),
        String(rates[i] ?? 0),
      ];
      return runLoader<LoadResult>(sub, LOADER, args);
    }),
  );
}

/**
 * Whether the resident set still grows once warm: the heap and SQLite's page cache fill during the first
 * half, so the verdict compares the end with the highest sample of the first half, not with the start.
 */
function growth(samples: number[], end: number): string {
  if (samples.length === 0) return 'too short to tell';
  const half = Math.max(1, Math.floor(samples.length / 2));
  const grew = end - Math.max(...samples.slice(0, half));
  return `${fmt(grew, 1)} MB over the second half (warm-up excluded); its trend ${fmt(slope(samples.slice(half)), 1)} MB/min`;
}

/**
 * The least-squares slope of samples taken every 5 s, in MB per minute. Beside the end-against-peak
 * figure above: V8's heap grows between major collections, so a short run can end on a rise that is
 * no leak (a 60 s run ended 37 MB up on its last 30 s; 240 s of the same traffic stayed in 190–211 MB).
 */
function slope(ys: number[]): number {
  if (ys.length < 2) return 0;
  const mx = (ys.length - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  ys.forEach((y, i) => {
    num += (i - mx) * (y - my);
    den += (i - mx) ** 2;
  });
  return (num / den) * 12;
}

/**
 * Issue #13's sustained row: webhooks, hooks and reports at once against a real `serve` process. A
 * short unthrottled probe finds each endpoint's maximum with the others running; then 60 s at 70 % of
 * it, printing p50/p99 per endpoint and the resident memory at the start and the end.
 */
export async function benchSustained(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-sustained-'));
  const eps = await endpoints();
  const gw = await gateway(dir);
  try {
    const probe = await loadAll(dir, gw.url, eps, PROBE_SECONDS, []);
    const rates = probe.map((r) => Math.max(1, Math.floor(r.rps * SHARE)));
    const rssStart = rssMb(gw.pid);
    const samples: number[] = [];
    const sampler = setInterval(() => samples.push(rssMb(gw.pid)), 5000);
    const run = await loadAll(dir, gw.url, eps, SECONDS, rates).finally(() => clearInterval(sampler));
    const rssEnd = rssMb(gw.pid);
    const out = [
      `sustained — ${SECONDS} s of mixed traffic at ${SHARE * 100} % of the probed maximum (real serve, SQLite FULL, ${CONNECTIONS} connections per endpoint; load average ${fmt(loadavg()[0] ?? 0, 1)})`,
    ];
    eps.forEach((e, i) => {
      const p = probe[i]!;
      const r = run[i]!;
      out.push(line(`${e.name}: probed max`, `${fmt(p.rps)}/s`, `${p.non2xx} non-2xx, ${p.errors} errors`));
      out.push(
        line(
          `  at ${fmt(rates[i]!)}/s: achieved, p50 / p99`,
          `${fmt(r.rps)}/s, ${fmt(r.p50, 1)} / ${fmt(r.p99, 1)} ms`,
          `${r.non2xx} non-2xx, ${r.errors} errors`,
        ),
      );
    });
    out.push(
      line(
        'RSS at start / end / max sampled',
        `${fmt(rssStart, 1)} / ${fmt(rssEnd, 1)} / ${fmt(Math.max(rssStart, ...samples), 1)} MB`,
        growth(samples, rssEnd),
      ),
      line('  RSS every 5 s', samples.map((m) => fmt(m, 0)).join(' '), 'MB'),
    );
    return out;
  } finally {
    gw.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
