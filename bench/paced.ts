import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { percentile } from './stats.js';

/** bench/ is compiled to dist-bench/bench/, two levels below the repository root (undici resolves there). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface PacedRequest {
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** Requests per second, sent on a fixed schedule whatever the answers (an open loop). */
  rate: number;
  seconds: number;
  /** The first seconds warm the JIT and the pool; their latencies are not counted. */
  warmSeconds?: number;
  connections?: number;
}

export interface PacedResult {
  /** Answered with a 2xx, counted seconds only. */
  ok: number;
  non2xx: number;
  errors: number;
  /** 2xx answers per second over the counted span, from the first counted send to the last answer. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** How late the generator sent, p99 (ms): near 0 means the schedule, not the generator, set the pace. */
  sendLateP99: number;
}

/**
 * A paced open-loop client in its own process (its work never shares the server's event loop): request
 * `i` is due at `start + i / rate`, is sent when due with an undici Pool, and its latency is measured
 * from the time it was due, so a generator or server that falls behind shows as latency instead of
 * as a slower schedule (no coordinated omission). autocannon's `overallRate` sends in bursts per tick
 * and measured a bare `/healthz` at p99 149 ms on this machine; this measures it at what the machine does.
 */
export async function pacedLoad(req: PacedRequest): Promise<PacedResult> {
  const script = `
    import { Pool } from 'undici';
    const spec = JSON.parse(process.argv[1]);
    const u = new URL(spec.url);
    const pool = new Pool(u.origin, { connections: spec.connections, pipelining: 1 });
    const total = Math.round(spec.rate * spec.seconds);
    const warm = Math.round(spec.rate * spec.warmSeconds);
    const lat = []; const late = [];
    let ok = 0, non2xx = 0, errors = 0, lastDone = 0, firstCounted = 0;
    const start = performance.now() + 20;
    const pending = [];
    for (let i = 0; i < total; i++) {
      const at = start + (i * 1000) / spec.rate;
      const wait = at - performance.now();
      if (wait > 0.5) await new Promise((r) => setTimeout(r, wait));
      const sent = performance.now();
      const counted = i >= warm;
      if (counted) { late.push(Math.max(0, sent - at)); if (i === warm) firstCounted = at; }
      pending.push(pool.request({ path: u.pathname + u.search, method: spec.method, body: spec.body || undefined, headers: spec.headers })
        .then(async (res) => {
          await res.body.text();
          if (!counted) return;
          if (res.statusCode >= 200 && res.statusCode < 300) ok++; else non2xx++;
        })
        .catch(() => { if (counted) errors++; })
        .finally(() => { if (counted) { const now = performance.now(); lat.push(now - at); lastDone = now; } }));
    }
    await Promise.all(pending); await pool.close();
    process.stdout.write(JSON.stringify({ lat, late, ok, non2xx, errors, span: lastDone - firstCounted }));
  `;
  const spec = {
    url: req.url,
    method: req.method ?? 'GET',
    body: req.body ?? '',
    headers: req.headers ?? {},
    rate: req.rate,
    seconds: req.seconds,
    warmSeconds: req.warmSeconds ?? 1,
    connections: req.connections ?? 32,
  };
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(spec)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  child.stdout.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('exit', resolve);
    child.on('error', reject);
  });
  if (code !== 0) throw new Error(`the paced loader exited with ${code}`);
  const r = JSON.parse(text) as {
    lat: number[];
    late: number[];
    ok: number;
    non2xx: number;
    errors: number;
    span: number;
  };
  const sorted = [...r.lat].sort((a, b) => a - b);
  const late = [...r.late].sort((a, b) => a - b);
  return {
    ok: r.ok,
    non2xx: r.non2xx,
    errors: r.errors,
    rps: r.ok / (Math.max(1, r.span) / 1000),
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? 0,
    sendLateP99: percentile(late, 99),
  };
}
