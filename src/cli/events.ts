import type { Envelope } from '../envelope/index.js';
import { EventLog } from '../log/log.js';
import { loadCliConfig, openExistingStore } from './context.js';
import { truncate } from '../text/index.js';

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
    else
      process.stdout.write(
        `${String(seq).padStart(6)} ${e.occurred_at} ${e.type.padEnd(32)} ${e.execution.task_id ?? '-'} ${summary(e)}\n`,
      );
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

function summary(e: Envelope): string {
  const parts = [e.subject.tool, e.subject.action, e.subject.resource_ref].filter(Boolean);
  const s = JSON.stringify(e.redacted_summary);
  return `${parts.join(' ')}${s !== '{}' ? ` ${truncate(s, 100)}` : ''}`;
}
