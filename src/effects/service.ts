import { bytesDigest, type Envelope, type EnvelopeInput, newId } from '../envelope/index.js';
import type { EventLog } from '../log/log.js';
import type { Db } from '../store/port.js';
import { prefix } from '../text/index.js';
import {
  type EffectKind,
  type EffectReceipt,
  type EffectStatus,
  type EffectView,
  type EffectsPort,
  effectKey,
  type PrepareEffect,
  type Prepared,
} from './port.js';
import * as q from './sql.js';
import { traceOf } from './trace.js';

export interface EffectsDeps {
  db: Db;
  log: Pick<EventLog, 'get' | 'list'>;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  now: () => number;
}

/** A receipt's detail is a word or a status line, never a body (the body is kept as a digest). */
const DETAIL_MAX_CHARS = 200;
const LIST_MAX = 500;
/** Receipts per read and UPDATE of `receiptedMany` (7 parameters each, well under SQLite's bound-parameter limit). */
const RECEIPT_CHUNK = 200;

export function view(r: q.EffectRow): EffectView {
  return {
    id: r.id,
    idempotency_key: r.idempotency_key,
    kind: r.kind as EffectKind,
    ref: r.ref,
    target: r.target,
    status: r.status as EffectStatus,
    plan_digest: r.plan_digest,
    capability_id: r.capability_id,
    policy_revision: r.policy_revision,
    approval_id: r.approval_id,
    task_id: r.task_id,
    correlation_id: r.correlation_id,
    causation_id: r.causation_id,
    provider_id: r.provider_id,
    answer_digest: r.answer_digest,
    detail: r.detail,
    prepared_event_id: r.prepared_event_id,
    receipted_event_id: r.receipted_event_id,
    created_at: new Date(Number(r.created_at)).toISOString(),
    updated_at: new Date(Number(r.updated_at)).toISOString(),
  };
}

export function createEffects(d: EffectsDeps): EffectsPort {
  const byKey = async (db: Db, key: string) => (await db.query<q.EffectRow>(q.selectByKey(key)))[0];

  /** The receipt's event, appended in `tx`, and the values its row is updated with. */
  const receiptWrite = async (row: q.EffectRow, key: string, r: EffectReceipt, tx: Db) => {
    const answerDigest = r.answer ? bytesDigest(r.answer) : null;
    const detail = r.detail ? prefix(r.detail, DETAIL_MAX_CHARS) : null;
    const event = await d.emit(
      {
        type: 'agent.effect.receipted',
        ...(row.correlation_id ? { correlation_id: row.correlation_id } : {}),
        causation_id: row.prepared_event_id,
        execution: { task_id: row.task_id },
        policy: { revision: row.policy_revision },
        subject: { tool: row.kind, resource_ref: row.ref },
        redacted_summary: {
          effect_id: row.id,
          idempotency_key: key,
          kind: row.kind,
          status: r.status,
          provider_id: r.provider_id ?? null,
          answer_digest: answerDigest,
          detail,
          capability_id: row.capability_id,
          approval_id: row.approval_id,
          ...(r.reconciled ? { reconciled: true } : {}),
        },
      },
      tx,
    );
    return {
      status: r.status,
      providerId: r.provider_id ?? null,
      answerDigest,
      detail,
      eventId: event.event_id,
    };
  };

  const service: EffectsPort = {
    async prepared(e: PrepareEffect, db: Db = d.db): Promise<Prepared> {
      const key = effectKey(e.plan_digest, e.capability_id);
      return db.tx(async (tx) => {
        const known = await byKey(tx, key);
        if (known) return { id: known.id, idempotency_key: key, created: false };
        const id = newId('effect', d.now());
        const event = await d.emit(
          {
            type: 'agent.effect.prepared',
            ...(e.correlation_id ? { correlation_id: e.correlation_id } : {}),
            ...(e.causation_id ? { causation_id: e.causation_id } : {}),
            execution: { task_id: e.task_id ?? null },
            policy: { revision: e.policy_revision ?? null },
            subject: { tool: e.kind, resource_ref: e.ref },
            redacted_summary: {
              effect_id: id,
              idempotency_key: key,
              kind: e.kind,
              target: e.target,
              plan_digest: e.plan_digest,
              capability_id: e.capability_id ?? null,
              approval_id: e.approval_id ?? null,
            },
          },
          tx,
        );
        await tx.query(
          q.insertEffect({
            id,
            idempotency_key: key,
            kind: e.kind,
            ref: e.ref,
            target: e.target,
            status: 'prepared',
            plan_digest: e.plan_digest,
            capability_id: e.capability_id ?? null,
            policy_revision: e.policy_revision ?? null,
            approval_id: e.approval_id ?? null,
            task_id: e.task_id ?? null,
            correlation_id: event.correlation_id,
            causation_id: e.causation_id ?? null,
            prepared_event_id: event.event_id,
            created_at: d.now(),
            updated_at: d.now(),
          }),
        );
        return { id, idempotency_key: key, created: true };
      });
    },

    async receipted(key: string, r: EffectReceipt, db: Db = d.db): Promise<EffectView | undefined> {
      return db.tx(async (tx) => {
        const row = await byKey(tx, key);
        if (!row) return undefined;
        const w = await receiptWrite(row, key, r, tx);
        await tx.query(q.receiptEffect({ key, ...w, now: d.now() }));
        const after = await byKey(tx, key);
        return after ? view(after) : undefined;
      });
    },

    async receiptedMany(items, db: Db = d.db): Promise<number> {
      if (items.length === 0) return 0;
      return db.tx(async (tx) => {
        let found = 0;
        for (let i = 0; i < items.length; i += RECEIPT_CHUNK) {
          const chunk = items.slice(i, i + RECEIPT_CHUNK);
          const rows = await tx.query<q.EffectRow>(q.selectByKeys([...new Set(chunk.map((c) => c.key))]));
          const byKeyRow = new Map(rows.map((r) => [r.idempotency_key, r]));
          // A key given twice keeps its last receipt, as two `receipted` calls in a row would.
          const last = new Map<string, Awaited<ReturnType<typeof receiptWrite>> & { key: string }>();
          for (const { key, receipt } of chunk) {
            const row = byKeyRow.get(key);
            if (!row) continue;
            found++;
            last.set(key, { key, ...(await receiptWrite(row, key, receipt, tx)) });
          }
          if (last.size > 0) await tx.query(q.receiptEffects([...last.values()], d.now()));
        }
        return found;
      });
    },

    async get(idOrKey) {
      const sql = idOrKey.startsWith('idk_') ? q.selectByKey(idOrKey) : q.selectById(idOrKey);
      const [row] = await d.db.query<q.EffectRow>(sql);
      return row ? view(row) : undefined;
    },

    async list(f = {}) {
      const rows = await d.db.query<q.EffectRow>(
        q.selectEffects({
          ...(f.status ? { statuses: [f.status] } : {}),
          ...(f.task_id ? { taskId: f.task_id } : {}),
          limit: Math.min(f.limit ?? 100, LIST_MAX),
        }),
      );
      return rows.map(view);
    },

    async unsettled(limit = 100) {
      const rows = await d.db.query<q.EffectRow>(
        q.selectEffects({ statuses: ['unsettled'], limit: Math.min(limit, LIST_MAX) }),
      );
      return rows.map(view);
    },

    trace: (id) => traceOf(d, id),
  };
  return service;
}
