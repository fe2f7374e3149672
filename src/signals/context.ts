import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { scanSecrets } from '../scan/secrets.js';
import type { Signal } from './mapping.js';
import { prefix, truncate } from '../text/index.js';

/** What a person needs to act on a signal, read from the payload (and `.git/HEAD` when it is local). */
export interface SignalContext {
  project?: string;
  branch?: string;
  session?: string;
  /** Milliseconds since the session was last active, when known. */
  waitingMs?: number;
}

/** The notify schema's cap on `summary`. */
export const SUMMARY_MAX = 120;

/**
 * The branch, without spawning git: the payload's own field when a runtime sends one, else the
 * checkout's `.git/HEAD` when the gateway runs on the same machine. Anything unreadable is no branch.
 */
export function branchOf(raw: Record<string, unknown>, cwd: string | undefined): string | undefined {
  for (const key of ['git_branch', 'gitBranch', 'branch']) {
    const v = raw[key];
    if (typeof v === 'string' && v.length > 0 && v.length < 200) return v;
  }
  if (!cwd) return undefined;
  try {
    const head = readFileSync(join(cwd, '.git', 'HEAD'), 'utf8').trim();
    const m = /^ref: refs\/heads\/(.+)$/.exec(head);
    return m?.[1];
  } catch {
    return undefined;
  }
}

export function projectOf(cwd: string | undefined): string | undefined {
  if (!cwd) return undefined;
  const name = basename(cwd.replace(/[\\/]+$/, ''));
  return name.length > 0 ? name : undefined;
}

export function formatWaiting(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m} min`;
  return `${Math.round(m / 60)} h`;
}

/** Cut between grapheme clusters: a Stop message with an emoji at the cut still reaches the phone. */
function cap(text: string, max: number): string {
  return max <= 1 ? prefix(text, max) : truncate(text, max);
}

/**
 * The runtime's words, spaces folded and capped, without splitting a secret before notify's content
 * gate has seen it whole: a cut through a token would leave its first half unrecognised (so unmasked
 * and not blocked), and `\s` matches U+FEFF, so folding would turn one hidden inside a token into a
 * space that splits it. A cut inside a secret moves to its end; U+FEFF is kept as it is.
 * src/notify/hostile.test.ts sends both through a Stop hook.
 */
function runtimeWords(text: string, max: number): string {
  const folded = text.replace(/[^\S\ufeff]+/g, ' ');
  if (folded.length <= max) return folded;
  const limit = max - 1;
  const straddling = scanSecrets(folded).find((f) => f.start < limit && f.end > limit);
  return cap(folded, straddling ? straddling.end + 1 : max);
}

/**
 * The `report_progress` arguments for a signal: a summary a lock screen can show, and a detail with
 * the runtime's words (capped) and the context. Pure; the content gate runs afterwards in notify.
 */
export function reportFor(
  signal: Signal,
  ctx: SignalContext,
  textMax: number,
): { stage: Signal['stage']; severity: Signal['severity']; summary: string; detail?: string } {
  const where = ctx.project ? ` · ${ctx.project}${ctx.branch ? ` (${ctx.branch})` : ''}` : '';
  const summary = cap(`${signal.headline}${where}`, SUMMARY_MAX);
  const lines: string[] = [];
  if (signal.text && textMax > 0) lines.push(runtimeWords(signal.text, textMax));
  if (ctx.project) lines.push(`project: ${ctx.project}`);
  if (ctx.branch) lines.push(`branch: ${ctx.branch}`);
  if (ctx.session) lines.push(`session: ${ctx.session}`);
  if (signal.needsPerson && ctx.waitingMs !== undefined) {
    lines.push(`waiting: ${formatWaiting(ctx.waitingMs)}`);
  }
  return {
    stage: signal.stage,
    severity: signal.severity,
    summary,
    ...(lines.length > 0 ? { detail: lines.join('\n') } : {}),
  };
}
