/**
 * `switchboard ingress replay <delivery>`: asks the running gateway to run admission again, under the
 * config it serves now, for a stored delivery. It talks HTTP (admin key), so the replay goes through the
 * same admission, budgets and launcher as live traffic, and creates new work.
 */

export interface ReplayOptions {
  /** Needed only when two sources stored a delivery with the same id. */
  source?: string;
  /** Default `SWITCHBOARD_URL`, else http://127.0.0.1:8787. */
  url?: string;
  json?: boolean;
}

/** Where client commands reach the gateway (CONTRACT.md). */
import { clientKey, DEFAULT_URL, noKeyMessage, unauthorizedMessage, unreachableMessage } from './client.js';

export interface ReplayResult {
  id: string;
  status: string;
  replay_of: string;
}

/** The request, formatted apart from sending so it can be tested without a gateway. */
export function replayRequest(
  id: string,
  opts: ReplayOptions,
  env: NodeJS.ProcessEnv = process.env,
): { url: string; init: RequestInit } {
  const key = clientKey(env, ['admin']);
  if (!key) throw new Error(noKeyMessage(['admin']));
  const base = (opts.url ?? env.SWITCHBOARD_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  const init: RequestInit = { method: 'POST', headers };
  if (opts.source !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify({ source: opts.source });
  }
  return { url: `${base}/v1/ingress/deliveries/${encodeURIComponent(id)}/replay`, init };
}

export async function replay(
  id: string,
  opts: ReplayOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ReplayResult> {
  const { url, init } = replayRequest(id, opts, env);
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    throw new Error(unreachableMessage(url.split('/v1/')[0]!, err));
  }
  if (res.status === 401) throw new Error(unauthorizedMessage(url.split('/v1/')[0]!));
  const body = (await res.json().catch(() => undefined)) as
    | (ReplayResult & { error?: { code: string; message: string } })
    | undefined;
  if (res.status !== 202 || !body || body.error) {
    const why = body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`;
    throw new Error(`replay of ${id} failed (${why})`);
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(body)}\n`);
  else
    process.stdout.write(
      `${body.id}  accepted  (replay of ${body.replay_of}; admission runs under the current config)\n`,
    );
  return body;
}
