import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auth, testApp } from '../src/server/testing.js';
import { fmt, line } from './stats.js';

/**
 * What tracing costs a request: the same authenticated request (`GET /v1/events?limit=1`: auth, a
 * store read) in process, with telemetry off and on (spans batched to a local OTLP collector that
 * answers 200), in the same run, taking turns; CPU microseconds per request beside requests/s.
 */
const N = 3000;

export async function benchTelemetry(): Promise<string[]> {
  const out = [`telemetry: trace overhead per request (${N} in-process requests each way, best of 3)`];
  let spans = 0;
  const collector = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      spans += (body.match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
  try {
    const measure = async (on: boolean) => {
      const t = await testApp({ config: on ? { telemetry: { otlp_endpoint: endpoint } } : {} });
      try {
        const headers = auth('admin');
        for (let i = 0; i < 200; i++) await t.app.request('/v1/events?limit=1', { headers });
        const cpu = process.cpuUsage();
        const start = performance.now();
        for (let i = 0; i < N; i++) await t.app.request('/v1/events?limit=1', { headers });
        const wall = performance.now() - start;
        const used = process.cpuUsage(cpu);
        return { rate: N / (wall / 1000), cpuUs: (used.user + used.system) / N };
      } finally {
        await t.cleanup();
      }
    };
    const best = { off: { rate: 0, cpuUs: Infinity }, on: { rate: 0, cpuUs: Infinity } };
    for (let r = 0; r < 3; r++) {
      for (const k of ['off', 'on'] as const) {
        const m = await measure(k === 'on');
        best[k] = { rate: Math.max(best[k].rate, m.rate), cpuUs: Math.min(best[k].cpuUs, m.cpuUs) };
      }
    }
    out.push(
      line('telemetry off', `${fmt(best.off.rate)} req/s`, `${fmt(best.off.cpuUs, 1)} µs CPU/request`),
    );
    out.push(
      line(
        'telemetry on (spans to a local collector)',
        `${fmt(best.on.rate)} req/s`,
        `${fmt(best.on.cpuUs, 1)} µs CPU/request: +${fmt(best.on.cpuUs - best.off.cpuUs, 1)} µs (${spans} spans exported)`,
      ),
    );
    return out;
  } finally {
    await new Promise((r) => collector.close(r));
  }
}
