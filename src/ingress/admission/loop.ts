import { isRecord, pick } from '../sources/common/request.js';

/**
 * Loop guard facts read from a payload. Everything Switchboard's agents post carries a hidden marker
 * `<!-- switchboard:depth=N hops=M -->`; when such a comment comes back as a webhook, its depth is N and
 * its hop count M, so a chain of agents answering each other is counted even though each webhook looks
 * new. `hops=` is optional (markers written before it still count depth).
 */
export const DEPTH_MARKER = /<!--\s*switchboard:depth=(\d{1,4})(?:\s+hops=(\d{1,4}))?\s*-->/g;

/** The text fields a posted comment, review or message lands in (GitHub, GitLab, Slack, Feishu). */
const TEXT_PATHS: readonly string[][] = [
  ['comment', 'body'],
  ['review', 'body'],
  ['issue', 'body'],
  ['pull_request', 'body'],
  ['object_attributes', 'note'],
  ['object_attributes', 'description'],
  ['event', 'text'],
  ['message', 'text'],
];

/** The formatted marker an agent's post must carry (the tasks module gives it as SWITCHBOARD_DEPTH_MARKER). */
export function depthMarker(depth: number, hops?: number): string {
  return hops === undefined
    ? `<!-- switchboard:depth=${depth} -->`
    : `<!-- switchboard:depth=${depth} hops=${hops} -->`;
}

function highest(payload: unknown, group: 1 | 2): number {
  let max = 0;
  for (const path of TEXT_PATHS) {
    const text = pick(payload, ...path);
    if (text === undefined) continue;
    for (const m of text.matchAll(DEPTH_MARKER))
      if (m[group] !== undefined) max = Math.max(max, Number(m[group]));
  }
  return max;
}

/** The highest depth marker in the payload's text fields; 0 when there is none. */
export function markerDepth(payload: unknown): number {
  return highest(payload, 1);
}

/** The highest hop count a marker in the payload's text fields carries; 0 when none does. */
export function markerHops(payload: unknown): number {
  return highest(payload, 2);
}

/** Who caused the event, as the sender names them: GitHub/GitLab logins, Slack and Feishu user ids. */
export function actorLogins(payload: unknown): string[] {
  const found = [
    pick(payload, 'sender', 'login'),
    pick(payload, 'comment', 'user', 'login'),
    pick(payload, 'review', 'user', 'login'),
    pick(payload, 'user', 'username'),
    pick(payload, 'event', 'user'),
    pick(payload, 'event', 'bot_id'),
    pick(payload, 'event', 'sender', 'sender_id', 'open_id'),
    pick(payload, 'message', 'from', 'username'),
  ];
  return [...new Set(found.filter((x): x is string => x !== undefined))];
}

/** The first configured bot identity that caused the event, if any. GitHub bots are also `<name>[bot]`. */
export function botActor(payload: unknown, botLogins: readonly string[]): string | undefined {
  if (botLogins.length === 0) return undefined;
  const bots = new Set(botLogins.map((b) => b.toLowerCase()));
  return actorLogins(payload).find((login) => {
    const l = login.toLowerCase();
    return bots.has(l) || bots.has(l.replace(/\[bot\]$/, ''));
  });
}

export { isRecord };
