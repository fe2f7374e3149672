import type { Envelope } from '../envelope/index.js';
import { EventLog } from '../log/log.js';
import { loadCliConfig, openExistingStore } from './context.js';
import { prefix } from '../text/index.js';

interface TailOptions {
  config?: string;
  lines: string;
  follow?: boolean;
  type?: string;
  task?: string;
  correlation?: string;
  json?: boolean;
}

/** Reads the store directly (WAL lets it read while the server writes), so it works with the server down too. */
export async function tail(opts: TailOptions): Promise<void> {
  const loaded = loadCliConfig(opts);
  const n = Number(opts.lines);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--lines must be a whole number, got ${opts.lines}`);
  const db = await openExistingStore(loaded);
  const log = new EventLog(db, {
    tenant_id: loaded.config.tenant.id,
    environment: loaded.config.tenant.environment,
  });
  const filter = {
    ...(opts.type ? { type: opts.type } : {}),
    ...(opts.task ? { taskId: opts.task } : {}),
    ...(opts.correlation ? { correlationId: opts.correlation } : {}),
  };
  let after = Math.max(0, (await log.lastSeq()) - (opts.type || opts.task || opts.correlation ? 100_000 : n));
  const print = (seq: number, e: Envelope) => {
    if (opts.json) process.stdout.write(`${JSON.stringify({ seq, ...e })}\n`);
    else process.stdout.write(`${formatEvent(seq, e)}\n`);
  };
  const page = async () => {
    const events = await log.list({ ...filter, afterSeq: after, limit: 1000 });
    for (const ev of events) {
      after = ev.seq;
    }
    return events;
  };
  const first = await page();
  for (const ev of n === 0 ? [] : first.slice(-n)) print(ev.seq, ev.envelope);
  if (!opts.follow) {
    await db.close();
    return;
  }
  const stop = () => {
    db.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  for (;;) {
    for (const ev of await page()) print(ev.seq, ev.envelope);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * One line per event: seq, time, type, who (agent and session), the task, then what happened. The
 * summary is `key=value` pairs; a pair that does not fit is left out whole and a long text is cut at
 * a word, so a line never ends in half a word or half a JSON value.
 */
export function formatEvent(seq: number, e: Envelope): string {
  const who = `${e.actor.agent_id ?? '-'}/${e.execution.session_id ?? '-'}`;
  const subject = [e.subject.tool, e.subject.action, e.subject.resource_ref].filter(Boolean).join(' ');
  const head = `${String(seq).padStart(6)} ${e.occurred_at} ${e.type.padEnd(32)} ${who} ${e.execution.task_id ?? '-'}`;
  return [head, subject, summaryPairs(e.redacted_summary)].filter(Boolean).join(' ');
}

const SUMMARY_ROOM = 160;
const VALUE_ROOM = 60;

function summaryPairs(summary: Record<string, unknown>): string {
  const pairs: string[] = [];
  let used = 0;
  let left = 0;
  for (const [k, v] of Object.entries(summary)) {
    const pair = `${k}=${valueText(v)}`;
    if (used + pair.length + 1 > SUMMARY_ROOM) {
      left++;
      continue;
    }
    pairs.push(pair);
    used += pair.length + 1;
  }
  return `${pairs.join(' ')}${left ? ` (+${left} more: --json)` : ''}`;
}

function valueText(v: unknown): string {
  const shown = atWord(typeof v === 'string' ? v : JSON.stringify(v), VALUE_ROOM);
  return typeof v === 'string' && /[\s"=]/.test(shown) ? JSON.stringify(shown) : shown;
}

/** `text` cut to at most `max` characters at a space (or whole, when it fits), with an ellipsis. */
function atWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(' ', max - 1);
  // No space in the second half (a URL, an id): cut inside it, never inside a character.
  return `${prefix(text, cut > max / 2 ? cut : max - 1).trimEnd()}…`;
}
