import type { Trace } from '../effects/port.js';
import { traceOf } from '../effects/trace.js';
import { EventLog } from '../log/log.js';
import { verifyChain } from '../log/verify.js';
import { loadCliConfig, openExistingStore } from './context.js';

export async function verify(opts: { config?: string }): Promise<void> {
  const db = await openExistingStore(loadCliConfig(opts));
  try {
    const result = await verifyChain(db);
    if (result.ok) {
      process.stdout.write(
        `ok: ${result.count} events, chain intact; head #${result.headSeq} sha256:${result.headHash}\n`,
      );
      return;
    }
    const bad = result.firstBad;
    process.stderr.write(
      `switchboard: audit failed at event #${bad.seq}${bad.eventId ? ` (${bad.eventId})` : ''}: ${bad.detail} [${bad.problem}]; ${result.count} events before it are intact\n`,
    );
    process.exitCode = 1;
  } finally {
    await db.close();
  }
}

/**
 * `switchboard audit trace <id>`: intent → decision → approval → effect → receipt for an event, task,
 * effect, delivery or touch id, read from the gateway's store (works with the server down).
 */
export async function trace(id: string, opts: { config?: string; json?: boolean }): Promise<void> {
  const loaded = loadCliConfig(opts);
  const db = await openExistingStore(loaded);
  try {
    const log = new EventLog(db, {
      tenant_id: loaded.config.tenant.id,
      environment: loaded.config.tenant.environment,
    });
    const t = await traceOf({ db, log }, id);
    if (!t) throw new Error(`nothing in the log or the effect ledger names ${id}`);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(t, null, 2)}\n`);
      return;
    }
    process.stdout.write(formatTrace(t));
  } finally {
    await db.close();
  }
}

export function formatTrace(t: Trace): string {
  const lines: string[] = [`trace ${t.id}: ${t.steps.length} steps, ${t.effects.length} effects`];
  for (const s of t.steps) {
    const facts = Object.entries(s.facts)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    const rev = s.policy_revision ? ` rev=${s.policy_revision}` : '';
    lines.push(
      `  #${s.seq} ${s.occurred_at} ${s.stage.padEnd(10)} ${s.type} ${s.event_id}${rev}${facts ? ` ${facts}` : ''}`,
    );
  }
  if (t.effects.length > 0) lines.push('effects:');
  for (const e of t.effects) {
    const parts = [
      `  ${e.id} ${e.kind} → ${e.target} ${e.status}`,
      `key=${e.idempotency_key}`,
      `plan=${e.plan_digest}`,
      ...(e.capability_id ? [`capability=${e.capability_id}`] : []),
      ...(e.policy_revision ? [`rev=${e.policy_revision}`] : []),
      ...(e.approval_id ? [`approval=${e.approval_id}`] : []),
      ...(e.provider_id ? [`provider_id=${e.provider_id}`] : []),
      ...(e.answer_digest ? [`answer=${e.answer_digest}`] : []),
      ...(e.detail ? [`detail=${JSON.stringify(e.detail)}`] : []),
    ];
    lines.push(parts.join(' '));
  }
  return `${lines.join('\n')}\n`;
}
