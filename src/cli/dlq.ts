/**
 * `switchboard dlq list|replay`: the dead-letter and reconciliation queues over the admin API, so it
 * works against any replica and a replay goes through the server's current config and secrets.
 * The server is `$SWITCHBOARD_URL` (default http://127.0.0.1:8787, CONTRACT.md), the key `$SWITCHBOARD_KEY`.
 */

import { clientKey, DEFAULT_URL, noKeyMessage, unauthorizedMessage, unreachableMessage } from './client.js';

export interface DlqContext {
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  out?: (line: string) => void;
}

export interface ListOptions extends DlqContext {
  status?: string;
  destination?: string;
  limit?: string;
  json?: boolean;
}

export interface ReplayOptions extends DlqContext {
  id?: string[];
  destination?: string;
  from?: string;
  to?: string;
  json?: boolean;
}

interface DeliveryView {
  id: string;
  destination: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  updated_at: string;
}

class DlqError extends Error {
  override name = 'DlqError';
}

async function call(ctx: DlqContext, path: string, init: RequestInit = {}): Promise<unknown> {
  const env = ctx.env ?? process.env;
  const base = (env['SWITCHBOARD_URL'] ?? DEFAULT_URL).replace(/\/+$/, '');
  const key = clientKey(env, ['admin']);
  if (!key) throw new DlqError(noKeyMessage(['admin']));
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await (ctx.fetch ?? fetch)(`${base}${path}`, { ...init, headers });
  } catch (err) {
    throw new DlqError(unreachableMessage(base, err));
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    throw new DlqError(`${base} answered ${res.status} with a body that is not JSON`);
  }
  if (res.status === 401) throw new DlqError(unauthorizedMessage(base));
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } }).error;
    throw new DlqError(
      `${res.status} ${e?.code ?? ''}: ${e?.message ?? 'request failed'}`.replace(' :', ':'),
    );
  }
  return body;
}

/** Lists deliveries (dead ones by default): one line each, or the JSON with `--json`. */
export async function list(opts: ListOptions = {}): Promise<DeliveryView[]> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const q = new URLSearchParams({ status: opts.status ?? 'dead' });
  if (opts.destination) q.set('destination', opts.destination);
  if (opts.limit) q.set('limit', opts.limit);
  const { deliveries } = (await call(opts, `/v1/deliveries?${q}`)) as { deliveries: DeliveryView[] };
  if (opts.json) out(JSON.stringify(deliveries, null, 2));
  else
    for (const d of deliveries)
      out(
        [
          d.id,
          d.destination,
          d.status,
          `attempts=${d.attempts}`,
          d.last_status ?? '-',
          d.updated_at,
          d.last_error ?? '',
        ].join('\t'),
      );
  return deliveries;
}

const asTime = (v: string): string | number => (/^\d+$/.test(v) ? Number(v) : v);

/** Replays by id, destination or time range under the server's current config. */
export async function replay(
  opts: ReplayOptions = {},
): Promise<{ replayed: string[]; refused: { id: string; reason: string }[] }> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const body: Record<string, unknown> = {};
  if (opts.id?.length) body['ids'] = opts.id;
  if (opts.destination) body['destination'] = opts.destination;
  if (opts.from) body['from'] = asTime(opts.from);
  if (opts.to) body['to'] = asTime(opts.to);
  if (Object.keys(body).length === 0)
    throw new DlqError('name what to replay: --id, --destination, or --from/--to');
  const result = (await call(opts, '/v1/deliveries/replay', {
    method: 'POST',
    body: JSON.stringify(body),
  })) as { replayed: string[]; refused: { id: string; reason: string }[] };
  if (opts.json) out(JSON.stringify(result, null, 2));
  else {
    out(`replayed ${result.replayed.length}`);
    for (const r of result.refused) out(`refused ${r.id}: ${r.reason}`);
  }
  return result;
}
