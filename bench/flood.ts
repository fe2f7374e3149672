import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import { type LoadResult, runLoader } from './stats.js';

/**
 * The signed-webhook flood `bench ingress` and `bench replicas` both drive: one GitHub push payload,
 * signed once, POSTed by autocannon in a process of its own (so the load never competes with the
 * server for the event loop), each request with a fresh `X-GitHub-Delivery`, so each one is new work
 * for the dedup record.
 */
const require = createRequire(import.meta.url);

const LOADER = `
const autocannon = require(process.env.AUTOCANNON);
const [url, body, headersJson, connections, duration, prefix] = process.argv.slice(2);
let n = 0;
autocannon({
  url, connections: Number(connections), duration: Number(duration),
  requests: [{ method: 'POST', body, headers: JSON.parse(headersJson),
    setupRequest: (req) => { req.headers = { ...req.headers, 'x-github-delivery': prefix + '-' + (n++) }; return req; } }],
}, (err, r) => {
  if (err) { console.error(err); process.exit(1); }
  process.stdout.write(JSON.stringify({ ok: r['2xx'], non2xx: r.non2xx, errors: r.errors, rps: r['2xx'] / (r.duration || Number(duration)), p50: r.latency.p50, p99: r.latency.p99 }));
});`;

/** A push delivery's body and headers, signed with `secret` as GitHub signs it. */
export async function signedPush(secret: string): Promise<{ body: string; headers: Record<string, string> }> {
  const examples = require('@octokit/webhooks-examples') as Array<{ name: string; examples: unknown[] }>;
  const body = JSON.stringify(examples.find((e) => e.name === 'push')?.examples[0]);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-hub-signature-256': await sign(secret, body),
    },
  };
}

/** One flood of `push` at `url` for `durationS` over `connections`; deliveries are `<prefix>-<n>`. */
export function flood(
  dir: string,
  push: { body: string; headers: Record<string, string> },
  o: { url: string; connections: number; durationS: number; prefix: string },
): Promise<LoadResult> {
  return runLoader<LoadResult>(dir, LOADER, [
    o.url,
    push.body,
    JSON.stringify(push.headers),
    String(o.connections),
    String(o.durationS),
    o.prefix,
  ]);
}
