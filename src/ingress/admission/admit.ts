import { causedBy, type Envelope, type EnvelopeInput, newId, sha256Hex } from '../../envelope/index.js';
import type { Services } from '../../kernel/module.js';
import type { Db } from '../../store/port.js';
import { getDelivery, markDelivery } from '../pipeline/deliveries.js';
import { type AcceptedFacts, readFacts } from '../pipeline/facts.js';
import type { TriggerContext } from './cel.js';
import type { LoopConfig } from './config.js';
import type { FetchConfig, FetchOutcome } from './fetch.js';
import { botActor, markerDepth, markerHops } from './loop.js';
import { loadPayload } from './payload.js';
import { checkOrder } from './order.js';
import { checkRevoked } from './revoked.js';
import { lockAdmission } from '../sql.js';
import { countSince, countTenantSince, findWaiting, hasActive, insertRun, replaceEvent } from './runs.js';
import type { CompiledTrigger } from './triggers.js';

/** PostgreSQL advisory lock that serialises admission decisions (budgets and coalescing read, then write). */
const ADMISSION_LOCK = 72_616_733;
const DAY_MS = 86_400_000;

export interface AdmissionDeps {
  services: Services;
  triggers: () => readonly CompiledTrigger[];
  loop: () => LoopConfig;
  sourceType: (name: string) => string | undefined;
  /** Re-reads the authoritative object for a trigger's `fetch`; absent, such triggers fail admission. */
  fetch?: (config: FetchConfig, payload: unknown) => Promise<FetchOutcome>;
}

/** Admission failed because a trigger's re-read failed; the relay retries it with its backoff. */
export class FetchFailedError extends Error {
  readonly classification = 'fetch_failed';
  constructor(trigger: string, reason: string) {
    super(`fetch_failed: trigger ${trigger}: ${reason}`);
    this.name = 'FetchFailedError';
  }
}

/** What each fetching trigger re-read, by trigger id. */
type Fetched = ReadonlyMap<string, FetchOutcome>;

type Decision =
  | { kind: 'admitted'; trigger: string; run_id: string; waits_for_active: boolean; due_at: string }
  | {
      kind: 'coalesced';
      trigger: string;
      run_id: string;
      key: string;
      /** The delivery the run will start with (the newest so far) and the one that will not start anything. */
      carries_event_id: string;
      superseded_event_id: string;
    }
  | { kind: 'dropped'; trigger: string | null; reason: string; detail?: Record<string, unknown> };

/**
 * Admission of one accepted delivery, exactly once (`once`): for each trigger of its source, in order —
 * filter, bot identities, loop guard, coalescing, budget — then a run is queued for the launcher.
 * Every decision is an event caused by the accepted event. Nothing here launches anything.
 */
export async function admit(deps: AdmissionDeps, event: Envelope): Promise<Decision[] | undefined> {
  const { services } = deps;
  const facts = readFacts(event.redacted_summary);
  if (!facts) return undefined;
  const now = services.now();
  try {
    // The network call happens before the transaction: no lock is held while the API answers.
    const fetched = await fetchAll(deps, event, facts);
    // Undefined: decided already (the outbox row came again).
    const decided = await services.db.tx(async (tx): Promise<Decision[] | undefined> => {
      if (tx.dialect === 'postgres') await tx.query(lockAdmission(ADMISSION_LOCK));
      const delivery = await getDelivery(tx, facts.source, facts.delivery_id);
      // A replay or a re-accepted redelivery moved the delivery on to a newer event: that one decides.
      if (!delivery || delivery.event_id !== event.event_id) return [];
      // The delivery's `processed` mark, committed with the decisions, is admission's inbox, so a
      // redelivered event never admits twice.
      if (delivery.status === 'processed') return undefined;
      const order = await checkOrder(tx, facts, event.event_id, now);
      const credential = await checkRevoked(services, tx, event, facts.source, fetched, now);
      const decisions: Decision[] =
        order.kind !== 'in_order'
          ? [{ kind: 'dropped', trigger: null, reason: 'out_of_order', detail: order.detail }]
          : credential.kind === 'revoked'
            ? [{ kind: 'dropped', trigger: null, reason: 'credential_revoked', detail: credential.detail }]
            : await decide(deps, tx, event, facts, now, fetched);
      await markDelivery(tx, event.event_id, 'processed', now);
      for (const d of decisions) await services.emit(causedBy(event, decisionEvent(facts, d)), tx);
      return decisions;
    });
    return decided;
  } catch (err) {
    // The delivery may now be accepted again when the sender redelivers it; the relay also retries this one.
    await markDelivery(
      services.db,
      event.event_id,
      'failed',
      now,
      (err as Error)?.message ?? String(err),
    ).catch(() => {});
    throw err;
  }
}

/** Runs the `fetch` of every trigger of the source whose `when` holds; a failure fails the admission. */
async function fetchAll(deps: AdmissionDeps, event: Envelope, facts: AcceptedFacts): Promise<Fetched> {
  const out = new Map<string, FetchOutcome>();
  const fetching = deps.triggers().filter((t) => t.config.source === facts.source && t.config.fetch);
  if (fetching.length === 0) return out;
  const loaded = await loadPayload(deps.services.vault, event, facts, deps.services.db);
  if (!loaded.ok) return out;
  const ctx = triggerContext(deps, event, facts, loaded.payload);
  for (const t of fetching) {
    const r = t.when?.(ctx) ?? { ok: true, value: true };
    if (!r.ok || !r.value) continue;
    if (!deps.fetch) throw new FetchFailedError(t.config.id, 'no fetcher is configured');
    const outcome = await deps.fetch(t.config.fetch!, loaded.payload);
    if (outcome.kind === 'failed') throw new FetchFailedError(t.config.id, outcome.reason);
    // A revoked credential is not retried: admission marks the source and derives nothing (revoked.ts).
    if (outcome.kind === 'revoked') return new Map([[t.config.id, outcome]]);
    out.set(t.config.id, outcome);
  }
  return out;
}

function triggerContext(
  deps: AdmissionDeps,
  event: Envelope,
  facts: AcceptedFacts,
  payload: unknown,
): TriggerContext {
  return {
    event: {
      type: event.type,
      event_id: event.event_id,
      name: facts.event,
      action: facts.action ?? null,
      delivery_id: facts.delivery_id,
      tenant_id: event.tenant_id,
      binding: facts.binding,
      lineage: event.lineage,
    },
    payload,
    source: { name: facts.source, type: deps.sourceType(facts.source) ?? facts.source_type },
  };
}

async function decide(
  deps: AdmissionDeps,
  tx: Db,
  event: Envelope,
  facts: AcceptedFacts,
  now: number,
  fetched: Fetched,
): Promise<Decision[]> {
  const loaded = await loadPayload(deps.services.vault, event, facts, tx);
  if (!loaded.ok) return [{ kind: 'dropped', trigger: null, reason: loaded.reason }];
  const loop = deps.loop();
  const ctx = triggerContext(deps, event, facts, loaded.payload);
  const bot = botActor(loaded.payload, loop.bot_logins);
  const depth = Math.max(event.lineage.depth, markerDepth(loaded.payload));
  const hops = Math.max(event.lineage.hop_count, markerHops(loaded.payload));
  const decisions: Decision[] = [];
  let wanted = false;

  for (const t of deps.triggers()) {
    const id = t.config.id;
    if (t.config.source !== facts.source) continue;
    if (t.when) {
      const r = t.when(ctx);
      if (!r.ok) {
        decisions.push({
          kind: 'dropped',
          trigger: id,
          reason: 'filter_error',
          detail: { message: r.message },
        });
        continue;
      }
      if (!r.value) continue;
    }
    wanted = true;
    if (bot !== undefined) {
      decisions.push({ kind: 'dropped', trigger: id, reason: 'bot_identity', detail: { actor: bot } });
      continue;
    }
    // Before coalescing, so a looping event can never replace a legitimate one waiting for its key.
    if (depth >= loop.max_depth) {
      decisions.push({
        kind: 'dropped',
        trigger: id,
        reason: 'depth_limit',
        detail: { depth, limit: loop.max_depth },
      });
      continue;
    }
    if (hops >= loop.max_hops) {
      decisions.push({
        kind: 'dropped',
        trigger: id,
        reason: 'hop_limit',
        detail: { hops, limit: loop.max_hops },
      });
      continue;
    }
    let tctx = ctx;
    let trusted: Record<string, string> | undefined;
    if (t.config.fetch) {
      const f = fetched.get(id);
      if (f?.kind !== 'fetched') {
        decisions.push({
          kind: 'dropped',
          trigger: id,
          reason: 'fetch_not_applicable',
          detail: { message: f?.kind === 'not_applicable' ? f.reason : 'nothing was fetched' },
        });
        continue;
      }
      tctx = { ...ctx, fetched: f.value };
      trusted = f.trusted;
      if (t.whenFetched) {
        const r = t.whenFetched(tctx);
        if (!r.ok || !r.value) {
          decisions.push({
            kind: 'dropped',
            trigger: id,
            reason: r.ok ? 'stale' : 'filter_error',
            detail: r.ok ? { fetched: trusted } : { message: r.message },
          });
          continue;
        }
      }
    }
    let key: string | undefined;
    if (t.key) {
      const r = t.key(tctx);
      if (!r.ok) {
        decisions.push({ kind: 'dropped', trigger: id, reason: 'key_error', detail: { message: r.message } });
        continue;
      }
      key = r.value;
      const waiting = await findWaiting(tx, id, key);
      if (waiting) {
        const newer = await replaceEvent(tx, waiting.id, event.event_id, now, trusted);
        decisions.push({
          kind: 'coalesced',
          trigger: id,
          run_id: waiting.id,
          key,
          carries_event_id: newer ? event.event_id : waiting.event_id,
          superseded_event_id: newer ? waiting.event_id : event.event_id,
        });
        continue;
      }
    }
    const perDay = t.config.budget?.per_day;
    if (perDay !== undefined) {
      const used = await countSince(tx, id, now - (now % DAY_MS));
      if (used >= perDay) {
        decisions.push({
          kind: 'dropped',
          trigger: id,
          reason: 'budget_per_day',
          detail: { limit: perDay, used },
        });
        continue;
      }
    }
    const tenantCap = loop.tenant_runs_per_day;
    if (tenantCap !== undefined) {
      const used = await countTenantSince(tx, event.tenant_id, now - (now % DAY_MS));
      if (used >= tenantCap) {
        decisions.push({
          kind: 'dropped',
          trigger: id,
          reason: 'budget_tenant_per_day',
          detail: { limit: tenantCap, used, tenant: event.tenant_id },
        });
        continue;
      }
    }
    const runId = newId('run', now);
    const runKey = key ?? runId;
    const active = key !== undefined && (await hasActive(tx, id, runKey));
    const dueAt = now + t.windowMs;
    await insertRun(tx, {
      id: runId,
      triggerId: id,
      key: runKey,
      tenantId: event.tenant_id,
      eventId: event.event_id,
      dueAt,
      now,
      fetched: trusted,
    });
    decisions.push({
      kind: 'admitted',
      trigger: id,
      run_id: runId,
      waits_for_active: active,
      due_at: new Date(dueAt).toISOString(),
    });
  }
  if (!wanted) decisions.push({ kind: 'dropped', trigger: null, reason: 'no_matching_trigger' });
  return decisions;
}

/** Keys are built from payload fields: shown as they are when they look like ids, else as a digest. */
function showKey(key: string): string {
  return /^[\w./#:@ -]{1,200}$/.test(key) ? key : `sha256:${sha256Hex(key).slice(0, 16)}`;
}

function decisionEvent(facts: AcceptedFacts, d: Decision): EnvelopeInput {
  const base = { source: facts.source, delivery_id: facts.delivery_id, event: facts.event };
  switch (d.kind) {
    case 'admitted':
      return {
        type: 'integration.webhook.admitted',
        redacted_summary: {
          ...base,
          trigger: d.trigger,
          run_id: d.run_id,
          waits_for_active: d.waits_for_active,
          due_at: d.due_at,
        },
        subject: { action: 'admit', resource_ref: d.run_id },
      };
    case 'coalesced':
      return {
        type: 'integration.webhook.coalesced',
        redacted_summary: {
          ...base,
          trigger: d.trigger,
          run_id: d.run_id,
          key: showKey(d.key),
          carries_event_id: d.carries_event_id,
          superseded_event_id: d.superseded_event_id,
        },
        subject: { action: 'coalesce', resource_ref: d.run_id },
      };
    case 'dropped':
      return {
        type: 'integration.webhook.dropped',
        redacted_summary: { ...base, trigger: d.trigger, reason: d.reason, ...d.detail },
        subject: { action: 'drop', resource_ref: d.trigger },
      };
  }
}
