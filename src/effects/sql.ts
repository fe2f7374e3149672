import type { Sql } from '../store/port.js';

/** SQL of the effects module (table `effects`, migration 1300). One text for both dialects. */

export interface EffectRow {
  id: string;
  idempotency_key: string;
  kind: string;
  ref: string;
  target: string;
  status: string;
  plan_digest: string;
  capability_id: string | null;
  policy_revision: string | null;
  approval_id: string | null;
  task_id: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  provider_id: string | null;
  answer_digest: string | null;
  detail: string | null;
  prepared_event_id: string;
  receipted_event_id: string | null;
  created_at: number;
  updated_at: number;
}

const COLUMNS = `id, idempotency_key, kind, ref, target, status, plan_digest, capability_id, policy_revision,
  approval_id, task_id, correlation_id, causation_id, provider_id, answer_digest, detail, prepared_event_id,
  receipted_event_id, created_at, updated_at`;

/** No row back when the key is taken: the effect was prepared before (a replayed launch, a re-claim). */
export function insertEffect(
  r: Omit<EffectRow, 'provider_id' | 'answer_digest' | 'detail' | 'receipted_event_id'>,
): Sql {
  return {
    text: `INSERT INTO effects (id, idempotency_key, kind, ref, target, status, plan_digest, capability_id,
  policy_revision, approval_id, task_id, correlation_id, causation_id, prepared_event_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)
ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
    values: [
      r.id,
      r.idempotency_key,
      r.kind,
      r.ref,
      r.target,
      r.status,
      r.plan_digest,
      r.capability_id,
      r.policy_revision,
      r.approval_id,
      r.task_id,
      r.correlation_id,
      r.causation_id,
      r.prepared_event_id,
      r.created_at,
    ],
  };
}

/** What a receipt writes on its effect's row. */
export interface EffectReceiptRow {
  key: string;
  status: string;
  providerId: string | null;
  answerDigest: string | null;
  detail: string | null;
  eventId: string;
}

export function receiptEffect(r: EffectReceiptRow & { now: number }): Sql {
  return {
    text: `UPDATE effects SET status = $2, provider_id = COALESCE($3, provider_id),
  answer_digest = COALESCE($4, answer_digest), detail = $5, receipted_event_id = $6, updated_at = $7
WHERE idempotency_key = $1`,
    values: [r.key, r.status, r.providerId, r.answerDigest, r.detail, r.eventId, r.now],
  };
}

/**
 * `receiptEffect` for many rows in one statement: the values ride in a VALUES list (its columns are
 * `column1…` in both dialects) and are cast, since PostgreSQL reads an untyped parameter there as text.
 */
export function receiptEffects(rows: readonly EffectReceiptRow[], now: number): Sql {
  const values: unknown[] = [now];
  const tuples = rows.map((r) => {
    const at = values.length;
    values.push(r.key, r.status, r.providerId, r.answerDigest, r.detail, r.eventId);
    const t = (i: number) => `CAST($${at + i} AS TEXT)`;
    return `(${[1, 2, 3, 4, 5, 6].map(t).join(', ')})`;
  });
  return {
    text: `UPDATE effects SET status = v.column2, provider_id = COALESCE(v.column3, effects.provider_id),
  answer_digest = COALESCE(v.column4, effects.answer_digest), detail = v.column5, receipted_event_id = v.column6,
  updated_at = $1
FROM (VALUES ${tuples.join(', ')}) AS v
WHERE effects.idempotency_key = v.column1`,
    values,
  };
}

export function selectByKeys(keys: readonly string[]): Sql {
  return {
    text: `SELECT ${COLUMNS} FROM effects WHERE idempotency_key IN (${keys.map((_, i) => `$${i + 1}`).join(', ')})`,
    values: [...keys],
  };
}

export function selectByKey(key: string): Sql {
  return { text: `SELECT ${COLUMNS} FROM effects WHERE idempotency_key = $1`, values: [key] };
}

export function selectById(id: string): Sql {
  return { text: `SELECT ${COLUMNS} FROM effects WHERE id = $1`, values: [id] };
}

/** An effect by anything that names it: its id, its key, what it acts for, its task, its events. */
export function selectRelated(id: string, limit: number): Sql {
  return {
    text: `SELECT ${COLUMNS} FROM effects
WHERE id = $1 OR idempotency_key = $1 OR ref = $1 OR task_id = $1 OR correlation_id = $1
  OR causation_id = $1 OR prepared_event_id = $1 OR receipted_event_id = $1
ORDER BY created_at, id LIMIT $2`,
    values: [id, limit],
  };
}

export function selectEffects(f: { statuses?: readonly string[]; taskId?: string; limit: number }): Sql {
  const where: string[] = [];
  const values: unknown[] = [];
  if (f.statuses) {
    const ps = f.statuses.map((s) => {
      values.push(s);
      return `$${values.length}`;
    });
    where.push(`status IN (${ps.join(', ')})`);
  }
  if (f.taskId) {
    values.push(f.taskId);
    where.push(`task_id = $${values.length}`);
  }
  values.push(f.limit);
  return {
    text: `SELECT ${COLUMNS} FROM effects${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
    values,
  };
}
