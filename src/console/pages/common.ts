import type { Hono } from 'hono';
import { AppError } from '../../errors/index.js';
import type { Role } from '../../kernel/module.js';
import { type ConsoleContext, type ConsoleEnv, consoleAuth } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import type { Frame, NavKey } from '../shell.js';

export type ConsoleRouter = Hono<ConsoleEnv>;

export const APPROVER_OR_ADMIN: readonly Role[] = ['approver', 'admin'];
export const ADMIN: readonly Role[] = ['admin'];

/** The most pending approvals counted for the badge; more shows as this many. */
const PENDING_COUNTED = 500;

export function guard(ctx: ConsoleCtx, roles: readonly Role[]) {
  return consoleAuth(ctx.sessions, ctx.deps.keys, roles);
}

export async function pendingCount(ctx: ConsoleCtx): Promise<number> {
  const approvals = ctx.deps.approvals;
  if (!approvals?.list) return 0;
  return (await approvals.list({ state: 'pending', limit: PENDING_COUNTED })).length;
}

/** What the shell needs for this request: who, their CSRF token, the badge count. */
export async function frame(
  c: ConsoleContext,
  ctx: ConsoleCtx,
  active: NavKey | null,
  live?: readonly string[],
): Promise<Frame> {
  return {
    principal: c.get('principal'),
    csrf: c.get('session')?.csrf ?? null,
    pending: await pendingCount(ctx),
    active,
    ...(live ? { live } : {}),
  };
}

/** A port the page needs, or a clear 503 naming the module that is not running. */
export function need<T>(value: T | undefined, module: string, what = 'this page'): T {
  if (value === undefined)
    throw new AppError('not_ready', `${what} needs the ${module} module, which is not running`);
  return value;
}

/** A query parameter checked against a pattern; a bad one is a 400 naming it. */
export function queryParam(c: ConsoleContext, name: string, pattern: RegExp): string | undefined {
  const v = c.req.query(name);
  if (v === undefined || v === '') return undefined;
  if (v.length > 200 || !pattern.test(v)) throw new AppError('bad_request', `\`${name}\` is not valid here`);
  return v;
}

/**
 * The notices a page shows after a form post (`?done=<key>`). A fixed list, so a crafted link cannot
 * make the console say something it never said.
 */
const NOTICES = {
  approved: 'Approved.',
  rejected: 'Rejected.',
  canceled: 'The task was canceled.',
  replayed: 'Replayed; the deliveries are pending again.',
  test_sent: 'The test message is queued; its attempts show below.',
  signed_out: 'Signed out.',
  away_on: 'Away mode is on: prompts no rule decides go to the phone.',
  away_off: 'Away mode is off: prompts stay at the desk.',
} as const;
export type NoticeKey = keyof typeof NOTICES;

/** After a form post from a page: back to it (303) with a notice, or JSON for the console script. */
export function done(c: ConsoleContext, to: string, key: NoticeKey, json: Record<string, unknown>) {
  if (c.req.header('x-requested-with') === 'console' || !c.req.header('accept')?.includes('text/html'))
    return c.json(json);
  const sep = to.includes('?') ? '&' : '?';
  return c.redirect(`${to}${sep}done=${key}`, 303);
}

export function notice(c: ConsoleContext): string | undefined {
  const key = c.req.query('done');
  return key && Object.hasOwn(NOTICES, key) ? NOTICES[key as NoticeKey] : undefined;
}
