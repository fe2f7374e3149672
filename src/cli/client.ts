/**
 * How client commands (`approvals`, `incidents`, …) talk to the gateway: `$SWITCHBOARD_URL` (default
 * http://127.0.0.1:8787, CONTRACT.md) with `$SWITCHBOARD_KEY`, JSON in and out, and every failure turned
 * into one line that says what to fix.
 */

export const DEFAULT_URL = 'http://127.0.0.1:8787';

export interface ClientOptions {
  /** Overrides `SWITCHBOARD_URL`. */
  url?: string;
  /** Injected in tests; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

export interface ClientMessages {
  /** When SWITCHBOARD_KEY is unset. */
  noKey: string;
  /** When the gateway answers 401. */
  unauthorized: string;
  /** When the gateway answers 403; gets the error code and message. */
  forbidden: (error: { code?: string; message?: string } | undefined) => string;
}

export async function gatewayCall(
  method: string,
  path: string,
  opts: ClientOptions,
  messages: ClientMessages,
  body?: unknown,
): Promise<unknown> {
  const env = opts.env ?? process.env;
  const base = (opts.url ?? env.SWITCHBOARD_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  const key = env.SWITCHBOARD_KEY;
  if (!key) throw new Error(messages.noKey);
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    throw new Error(
      `cannot reach the gateway at ${base}${code ? ` (${code})` : ''}; is it running? (SWITCHBOARD_URL)`,
    );
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.ok) return parsed;
  const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
  if (res.status === 401) throw new Error(messages.unauthorized);
  if (res.status === 403) throw new Error(messages.forbidden(error));
  throw new Error(
    `${error?.message ?? `the gateway answered ${res.status}`}${error?.code ? ` (${error.code})` : ''}`,
  );
}
