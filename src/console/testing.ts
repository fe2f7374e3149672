import type { Module } from '../kernel/module.js';
import { allModules } from '../server/modules.js';
import { KEYS, type TestApp, testApp } from '../server/testing.js';
import type { Dialect } from '../store/port.js';

/** Test helpers for the console suites (not shipped behaviour). */

/** Markup an agent might put in what a person reads: each must arrive as text. */
export const XSS_CORPUS = [
  '<img src=x onerror="window.__xss=1">',
  '"><script>window.__xss=2</script>',
  'javascript:window.__xss=3//',
  '<a href="javascript:window.__xss=4">click</a>',
  '<svg onload="window.__xss=5">',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder is the payload, on purpose
  '`${window.__xss=6}`',
  "'; window.__xss=7; '",
];

const ANY_PARAMS = { type: 'object', properties: { n: { type: 'integer' } } };
/** Two real command tools: one that answers, one whose program does not exist. */
export const TOOLS = {
  'ops.uptime': {
    kind: 'command',
    description: 'How long the box has been up',
    input_schema: ANY_PARAMS,
    command: ['/usr/bin/uptime'],
  },
  'ops.missing': {
    kind: 'command',
    description: XSS_CORPUS[0],
    input_schema: ANY_PARAMS,
    command: ['/nonexistent/tool'],
  },
};

export interface Signed {
  /** The `Cookie` header value carrying the session. */
  cookie: string;
  /** The session's CSRF token, as the pages carry it. */
  csrf: string;
}

/** The value of `name` in a response's Set-Cookie headers. */
export function cookieOf(res: Response, name: string): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const [k, ...v] = (pair ?? '').split('=');
    if (k?.trim() === name) return v.join('=');
  }
  return undefined;
}

export function csrfOf(html: string): string {
  const m = /name="(?:csrf-token|_csrf)" (?:content|value)="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1]!;
}

type Fetcher = { request(path: string, init?: RequestInit): Response | Promise<Response> };

/** The sign-in a browser does: fetch the form, post the key with the form's token. */
export async function signIn(app: Fetcher, key: string): Promise<{ res: Response; signed?: Signed }> {
  const form = await app.request('/console/login');
  const loginToken = cookieOf(form, 'sb_console_login')!;
  const res = await app.request('/console/login', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `sb_console_login=${loginToken}`,
      accept: 'text/html',
    },
    body: new URLSearchParams({ _csrf: csrfOf(await form.text()), key, next: '/console/' }),
  });
  const session = cookieOf(res, 'sb_console');
  if (!session) return { res };
  const cookie = `sb_console=${session}`;
  const page = await app.request('/console/', { headers: { cookie, accept: 'text/html' } });
  return { res, signed: { cookie, csrf: csrfOf(await page.text()) } };
}

/** A form post from a signed-in page (the token given, or none with `csrf: null`). */
export function post(
  app: Fetcher,
  path: string,
  signed: Signed,
  fields: Record<string, string | string[]> = {},
  opts: { csrf?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const body = new URLSearchParams();
  const token = opts.csrf === undefined ? signed.csrf : opts.csrf;
  if (token !== null) body.set('_csrf', token);
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return Promise.resolve(
    app.request(path, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: signed.cookie,
        accept: 'application/json',
        'x-requested-with': 'console',
        ...opts.headers,
      },
      body,
    }),
  );
}

export function page(app: Fetcher, path: string, signed: Signed): Promise<Response> {
  return Promise.resolve(app.request(path, { headers: { cookie: signed.cookie, accept: 'text/html' } }));
}

export interface ConsoleHarness {
  t: TestApp;
  admin: Signed;
  approver: Signed;
  /** Live streams open to this app's console. */
  liveClients(): number;
  /** How many events the log holds (a GET must never add one). */
  eventCount(): Promise<number>;
  /** Takes a metrics-at-a-glance sample now (the worker takes one every 10 s). */
  sampleGlance(): Promise<void>;
  cleanup(): Promise<void>;
}

/** The whole app (every module, the console among them) with an admin and an approver signed in. */
export async function consoleHarness(
  dialect: Dialect = 'sqlite',
  opts: {
    config?: Record<string, unknown>;
    /** Modules in place of the app's own of the same name (a delivery module on loopback sockets). */
    replace?: readonly Module[];
    now?: () => number;
  } = {},
): Promise<ConsoleHarness> {
  const replaced = new Map((opts.replace ?? []).map((m) => [m.name, m]));
  const modules = allModules().map((m) => replaced.get(m.name) ?? m) as Module[];
  const t = await testApp({
    dialect,
    modules,
    ...(opts.config ? { config: opts.config } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const admin = (await signIn(t.app, KEYS.admin)).signed;
  const approver = (await signIn(t.app, KEYS.approver)).signed;
  if (!admin || !approver) throw new Error('could not sign in to the console');
  return {
    t,
    admin,
    approver,
    liveClients: () =>
      (
        modules.find((m) => m.name === 'console') as { liveClients?: () => number } | undefined
      )?.liveClients?.() ?? 0,
    async eventCount() {
      return t.services.log.lastSeq();
    },
    async sampleGlance() {
      const mod = modules.find((m) => m.name === 'console') as { sampleGlance?: () => Promise<void> };
      await mod.sampleGlance?.();
    },
    cleanup: () => t.cleanup(),
  };
}
