/**
 * `switchboard away on|off|status`: whether prompts that wait for a person go to the phone. Over the
 * API (`PUT/GET /v1/away`), so every replica sees the same switch. The server is `$SWITCHBOARD_URL`
 * (default http://127.0.0.1:8787, CONTRACT.md), the key `$SWITCHBOARD_KEY` (an admin or approver key).
 */

import { clientKey, DEFAULT_URL, noKeyMessage, unauthorizedMessage, unreachableMessage } from './client.js';
import { prefix } from '../text/index.js';

export type AwayAction = 'on' | 'off' | 'status';

export interface AwayOptions {
  owner?: string;
  json?: boolean;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  out?: (line: string) => void;
}

export interface AwayView {
  owner: string;
  away: boolean;
  effective: boolean;
  reason: string;
  changed_at: string | null;
  changed_by: string | null;
  auto_after_idle_seconds: number | null;
  last_input_at: string | null;
}

class AwayError extends Error {
  override name = 'AwayError';
}

/** One line a person reads: what counts now, and why. */
export function describeAway(v: AwayView): string {
  const who = v.owner ? ` (${v.owner})` : '';
  const state = v.effective ? 'away' : 'at the desk';
  const why =
    v.reason === 'no_input'
      ? `no typed input for ${v.auto_after_idle_seconds} s`
      : v.reason === 'never_set'
        ? 'never switched'
        : `switched ${v.away ? 'on' : 'off'} by ${v.changed_by} at ${v.changed_at}`;
  return `${state}${who}: ${why}; prompts that wait for you ${v.effective ? 'go to your phone' : 'are only recorded'}`;
}

export async function run(action: string, opts: AwayOptions = {}): Promise<AwayView> {
  if (action !== 'on' && action !== 'off' && action !== 'status') {
    throw new AwayError(`away takes on, off or status, not ${JSON.stringify(prefix(action, 20))}`);
  }
  const env = opts.env ?? process.env;
  const base = (env['SWITCHBOARD_URL'] ?? DEFAULT_URL).replace(/\/+$/, '');
  const key = clientKey(env, ['approver', 'admin']);
  if (!key) throw new AwayError(noKeyMessage(['approver', 'admin']));
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  let url = `${base}/v1/away`;
  const init: RequestInit = { headers };
  if (action === 'status') {
    if (opts.owner) url += `?${new URLSearchParams({ owner: opts.owner })}`;
  } else {
    headers['content-type'] = 'application/json';
    init.method = 'PUT';
    init.body = JSON.stringify({ away: action === 'on', ...(opts.owner ? { owner: opts.owner } : {}) });
  }
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(url, init);
  } catch (err) {
    throw new AwayError(unreachableMessage(base, err));
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    throw new AwayError(`${base} answered ${res.status} with a body that is not JSON`);
  }
  if (res.status === 401) throw new AwayError(unauthorizedMessage(base));
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } }).error;
    throw new AwayError(
      `${res.status} ${e?.code ?? ''}: ${e?.message ?? 'request failed'}`.replace(' :', ':'),
    );
  }
  const view = body as AwayView;
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  out(opts.json ? JSON.stringify(view, null, 2) : describeAway(view));
  return view;
}
