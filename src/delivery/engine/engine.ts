import type { Logger } from 'pino';
import { resumeSpan } from '../../trace/span.js';
import { type AnyChannelKind, channelKind, type SmtpTransport } from '../../channels/index.js';
import type { Egress } from '../../egress/index.js';
import type { Message } from '../../notify/port.js';
import type { EnvelopeInput } from '../../envelope/index.js';
import { startWorker, type Worker, type WorkerSpec } from '../../kernel/worker.js';
import type { EventLog } from '../../log/log.js';
import type { Db } from '../../store/port.js';
import type { DeliveryPolicies } from '../config.js';
import type { DynamicSender } from '../port.js';
import { deliveryEvent } from '../events.js';
import { attemptDelivery } from './attempt.js';
import { deliveryKey } from './effects.js';
import type { EffectsPort } from '../../effects/port.js';
import {
  asksFirst,
  DEDUP_CHANNEL_TYPES,
  type Finished,
  keepTrying,
  parseMessage,
  refusal,
} from './settle.js';
import { admitGroup, loadEndpoint, saveEndpoint } from './endpoint.js';
import type { DeliveryMetrics } from './metrics.js';
import { credentialFingerprint, restoredEvent, revokedRefusal } from './revoked.js';
import { type Recorded, recordBatch } from './record.js';
import * as q from './sql.js';

/**
 * The delivery workers: one kernel worker with `loops` lanes. Each pass claims a batch of due rows
 * (leased, so a dead worker's rows come back), admits them per destination against the persisted
 * breaker and rate bucket, sends the admitted ones concurrently, and records every outcome, its event
 * and the endpoint's new state in one transaction. Several lanes run per engine, and several engines
 * may share one PostgreSQL (`SKIP LOCKED`).
 */

export { DEDUP_CHANNEL_TYPES } from './settle.js';

export const ENGINE_DEFAULTS = {
  batchSize: 64, // one claim and one commit per 64 deliveries keeps SQLite's fsyncs off the hot path
  loops: 4, // enough to keep a batch in flight while another one commits
  pollMs: 250, // the core relay's interval; enqueues in this process wake the loop at once
  leaseMarginMs: 30_000, // beyond the attempt timeout: a slow commit must not let a live row be re-claimed
  sweepEveryMs: 1_000,
  maxBackoffMs: 10_000, // a failing pass (store down) doubles its wait from pollMs up to this; a wake cuts it short
} as const;

export interface ChannelEntry {
  type: string;
  [key: string]: unknown;
}

export interface EngineOptions {
  db: Db;
  log: EventLog;
  /** The current `channels:` section; read on every attempt, so a replay uses the config in force. */
  channels: () => Record<string, ChannelEntry>;
  policies: DeliveryPolicies;
  /** Every attempt posts through it (`egress.allow`, the guarded dispatcher). */
  egress: Pick<Egress, 'post'>;
  /** SMTP through the egress policy (`guardedSmtp`); without it the email channel's default client. */
  smtp?: SmtpTransport;
  secret: (env: string) => string | undefined;
  now: () => number;
  metrics?: DeliveryMetrics;
  onAppended?: (types: string[]) => void;
  logger?: Logger;
  random?: () => number;
  /** The sender of a destination no channel names (`<type>:<id>`, `DeliveryPort.addSender`). */
  dynamic?: (destination: string) => DynamicSender | undefined;
  /** The effect ledger, when the effects module runs: every settled attempt records its receipt. */
  effects?: () => EffectsPort | undefined;
  batchSize?: number;
  loops?: number;
  pollMs?: number;
  leaseMs?: number;
}

/** A dynamic sender as the attempt sees a channel kind: it sends the stored payload as it is. */
function senderKind(sender: DynamicSender): Pick<AnyChannelKind, 'send' | 'verdict'> {
  return {
    send: (payload, _config, deps) => sender.send(payload, deps),
    ...(sender.verdict ? { verdict: sender.verdict } : {}),
  };
}

/** What a claim took, before its commit: the rows to send, and what the commit must be followed by. */
interface Claimed {
  ready: Prepared[];
  /** The claim took a whole batch: more rows may be due now. */
  full: boolean;
  /** Rows no attempt can send (revoked channel, unknown channel, bad JSON): settled after the commit. */
  refused: Finished[];
  restored: EnvelopeInput[];
}

interface Prepared {
  row: q.DeliveryRow;
  kind: Pick<AnyChannelKind, 'send' | 'verdict'>;
  config: unknown;
  message: Message;
}

export class DeliveryEngine {
  private readonly batchSize: number;
  private readonly loops: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private worker: Worker | undefined;
  private lastSweep = 0;
  private readonly parsed = new WeakMap<object, Map<string, unknown>>();

  constructor(private readonly o: EngineOptions) {
    this.batchSize = o.batchSize ?? ENGINE_DEFAULTS.batchSize;
    this.loops = o.loops ?? ENGINE_DEFAULTS.loops;
    this.pollMs = o.pollMs ?? ENGINE_DEFAULTS.pollMs;
    this.leaseMs = o.leaseMs ?? o.policies.timeoutMs + ENGINE_DEFAULTS.leaseMarginMs;
  }

  /**
   * The engine's loops as one worker with `loops` lanes rather than `loops` workers: the worker's lanes
   * already give "a wake starts one idle lane, and a wake that finds every lane busy is kept", which
   * separate workers could only share through state of the engine's own (wake.test.ts pins it).
   */
  workerSpec(): WorkerSpec {
    return {
      name: 'delivery',
      intervalMs: this.pollMs,
      immediate: true,
      concurrency: this.loops,
      backoff: { minMs: this.pollMs, maxMs: Math.max(this.pollMs, ENGINE_DEFAULTS.maxBackoffMs), factor: 2 },
      // A claim short of a batch left nothing due behind it: rows enqueued since then wake a lane
      // themselves, so claiming again at once would only find nothing.
      tick: async (signal) => (await this.pass(signal)).full,
      onError: (err, retryInMs) =>
        this.o.logger?.error({ err, retryInMs }, 'delivery pass failed; retrying after a back-off'),
    };
  }

  start(): void {
    this.worker ??= startWorker(this.workerSpec());
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    this.worker = undefined;
    await Promise.all([...this.sending]);
  }

  /** Sends of rows enqueued by this process, leased at their enqueue (`admitNow`, `sendLeased`). */
  private readonly sending = new Set<Promise<void>>();

  /**
   * For a row about to be enqueued in `tx` and sent by this process right after the commit
   * (`DeliveryPort.enqueueNow`): its destination's breaker and rate bucket admit it here, in the
   * enqueuing transaction, as a claim would, and it is to be written `claimed` with the lease a claim
   * gives, so no claimer (here or on another replica) takes it while it is in flight. Undefined when
   * it must wait for the normal claim: the engine is not running, the destination is neither a
   * configured channel a claim would send as it is (on SQLite: known kind, valid config, no revocation
   * mark) nor a module's own (`addSender`), as many such sends as the lanes' batches are in flight
   * already, or the endpoint defers or refuses it (the claim then admits it again).
   * `admitted` saves the endpoint's new state: the caller runs it once the row is inserted (a
   * duplicate row took nothing from the bucket).
   */
  async admitNow(
    tx: Db,
    destination: string,
  ): Promise<{ leaseUntil: number; admitted: () => Promise<void> } | undefined> {
    if (!this.worker) return undefined;
    const configured = this.o.channels()[destination] !== undefined;
    // On PostgreSQL the endpoint's row stays locked from here to the caller's commit: replicas' reports
    // to one configured channel (the phone) would queue on it, so they keep the claim, whose lock is
    // short. A module's own destination is one callback origin, rarely shared.
    if (configured && tx.dialect !== 'sqlite') return undefined;
    if (configured ? !this.configuredSend(destination) : !this.o.dynamic?.(destination)) return undefined;
    // As many in flight as the lanes' batches at most: past that a flood waits for the claim.
    if (this.sending.size >= this.loops * this.batchSize) return undefined;
    // A channel whose credential the provider refused is the claim's to settle (refused, or tried again
    // once the credential changed).
    if (configured && (await tx.query(q.selectRevokedChannel(destination))).length > 0) return undefined;
    const now = this.o.now();
    const state = await loadEndpoint(tx, destination, now, this.o.policies);
    const { state: next, verdicts } = admitGroup(state, 1, now, this.o.policies);
    if (verdicts[0]?.kind !== 'send') return undefined;
    return {
      leaseUntil: now + this.leaseMs,
      admitted: () => saveEndpoint(tx, destination, next, now),
    };
  }

  /**
   * Sends a row `admitNow` leased, once its transaction has committed, and settles it as a pass
   * settles its batch. A crash before or during the send leaves the row claimed until its lease runs
   * out; the sweep then makes it due again (or sends it to reconciliation) exactly as for a worker that
   * died mid-attempt (crash.test.ts, send-now.test.ts).
   */
  sendLeased(row: q.DeliveryRow): void {
    const message = parseMessage(row.message ?? '');
    const sender = this.o.channels()[row.destination] ? undefined : this.o.dynamic?.(row.destination);
    const send = sender
      ? { kind: senderKind(sender), config: undefined }
      : this.configuredSend(row.destination);
    if (!send || !message) return; // left to the lease: the sweep hands it to the normal path
    const sent: Promise<void> = this.send({ row, ...send, message })
      .then((f) => (f ? this.settleSoon(f) : undefined))
      .catch((err: unknown) =>
        this.o.logger?.error(
          { err, deliveryId: row.id },
          'delivery: a send at enqueue failed; its lease will run out',
        ),
      )
      .finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }

  /** Sends at enqueue that finished, waiting for their settle (`settleSoon`). */
  private readonly settleQueue: { f: Finished; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private settling = false;

  /**
   * Settles a send at enqueue as a pass settles its batch. The first waits for nothing; those that finish
   * while a settle's transaction runs share the next one (at most a batch), so a flood of sends at
   * enqueue costs a settle per batch, as the claim path does, instead of one per row.
   */
  private settleSoon(f: Finished): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.settleQueue.push({ f, resolve, reject });
      if (!this.settling) void this.settleLoop();
    });
  }

  private async settleLoop(): Promise<void> {
    this.settling = true;
    try {
      while (this.settleQueue.length > 0) {
        const batch = this.settleQueue.splice(0, this.batchSize);
        try {
          await this.complete(batch.map((b) => b.f));
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.settling = false;
    }
  }

  /**
   * Something was enqueued or became due: one idle lane runs a pass now instead of at the next poll.
   * Waking every lane made the others claim nothing, each in a write transaction of its own (the
   * notify bench counted five claim passes per delivery); a wake while all lanes are busy is kept.
   */
  wake(): void {
    this.worker?.wake();
  }

  private dueInTurn = 0;

  /**
   * A row was enqueued (the service's after-commit hook). The rows of one group commit have their hooks
   * run in one turn, so their wakes are counted and, once the turn ends, one lane per batch of them is
   * woken: a lane each made the other lanes claim nothing, each in a transaction of its own (the notify
   * bench, 8 clients). wake-rows.test.ts pins it.
   */
  rowDue(): void {
    if (this.dueInTurn++ > 0) return;
    queueMicrotask(() => {
      const lanes = Math.min(this.loops, Math.ceil(this.dueInTurn / this.batchSize));
      this.dueInTurn = 0;
      for (let i = 0; i < lanes; i++) this.wake();
    });
  }

  /** One pass: sweep expired leases (at most once a second), claim, send, record. Returns rows claimed. */
  async runOnce(): Promise<number> {
    return (await this.pass(undefined, true)).sent;
  }

  /**
   * `full`: the last claim took a whole batch, so more rows may be due right now. `once`: one batch
   * only (`runOnce`), its settle in a transaction of its own.
   */
  private async pass(signal?: AbortSignal, once = false): Promise<{ sent: number; full: boolean }> {
    await this.sweepIfDue();
    let { prepared, full } = await this.claim(this.o.now());
    let sent = 0;
    while (prepared.length > 0) {
      sent += prepared.length;
      const sends = prepared.map((p) => this.send(p));
      const finished = (await Promise.all(sends)).filter((f): f is Finished => f !== undefined);
      // A full batch left more due behind it (a backlog): its settle and the next batch's claim share
      // one transaction, so a lane pays one commit per batch instead of two. Not while stopping: rows
      // claimed then would wait for their lease to run out.
      if (!full || once || signal?.aborted) {
        if (finished.length > 0) await this.complete(finished);
        break;
      }
      ({ prepared, full } = await this.complete(finished, true));
      // A lane may stay in this loop for a whole backlog: expired leases are still swept once a second.
      await this.sweepIfDue();
    }
    return { sent, full };
  }

  private async sweepIfDue(): Promise<void> {
    const now = this.o.now();
    if (now - this.lastSweep < ENGINE_DEFAULTS.sweepEveryMs) return;
    this.lastSweep = now;
    await this.sweep(now);
  }

  private async sweep(now: number): Promise<void> {
    const types: string[] = [];
    await this.o.db.tx(async (tx) => {
      const rows = await tx.query<
        Pick<
          q.DeliveryRow,
          'id' | 'event_id' | 'correlation_id' | 'destination' | 'channel_type' | 'status' | 'attempts'
        >
      >(q.expireLeases(tx.dialect, now, DEDUP_CHANNEL_TYPES));
      if (rows.length === 0) return;
      const inputs: EnvelopeInput[] = rows.map((r) =>
        deliveryEvent('integration.delivery.unknown', r, r.channel_type, {
          summary: 'lease expired: the worker stopped mid-attempt',
          outcome: 'unknown',
          attempt: Number(r.attempts),
          reconcile: r.status === 'reconcile',
        }),
      );
      await this.o.log.appendMany(inputs, tx);
      for (const i of inputs) types.push(i.type);
      const effects = this.o.effects?.();
      const lost = { status: 'unknown', detail: 'lease expired: the worker stopped mid-attempt' } as const;
      const receipts = rows
        .filter((r) => r.status === 'reconcile')
        .map((r) => ({ key: deliveryKey(r), receipt: lost }));
      if (effects && receipts.length > 0) {
        if (effects.receiptedMany) await effects.receiptedMany(receipts, tx);
        else for (const r of receipts) await effects.receipted(r.key, r.receipt, tx);
      }
      for (const r of rows)
        this.o.metrics?.outcomes.inc({
          destination: r.destination,
          outcome: r.status === 'reconcile' ? 'reconcile' : 'unknown',
        });
    });
    if (types.length > 0) this.appended(types);
  }

  /** Claims a batch and admits it per destination, in one transaction. */
  private async claim(now: number): Promise<{ prepared: Prepared[]; full: boolean }> {
    const claimed = await this.o.db.tx((tx) => this.claimIn(tx, now));
    return this.claimed(claimed);
  }

  /** After the claim's commit: its restored-channel events announced, its refused rows settled. */
  private async claimed(c: Claimed): Promise<{ prepared: Prepared[]; full: boolean }> {
    if (c.restored.length > 0) this.appended(c.restored.map((e) => e.type));
    if (c.refused.length > 0) await this.complete(c.refused);
    return { prepared: c.ready, full: c.full };
  }

  private async claimIn(tx: Db, now: number): Promise<Claimed> {
    const channels = this.o.channels();
    const refused: Finished[] = [];
    const restored: EnvelopeInput[] = [];
    let full = false;
    const prepared = await (async () => {
      const lease = now + this.leaseMs;
      const rows = await tx.query<q.DeliveryRow>(q.claimDue(tx.dialect, now, lease, this.batchSize, 1));
      if (rows.length < this.batchSize) {
        const normal = q.claimDue(tx.dialect, now, lease, this.batchSize - rows.length, 0);
        rows.push(...(await tx.query<q.DeliveryRow>(normal)));
      }
      full = rows.length >= this.batchSize;
      const ready: Prepared[] = [];
      // Channels whose credential the provider refused (revoked.ts): a tiny table, read per claimed batch.
      const marks = new Map(
        rows.length === 0
          ? []
          : (await tx.query<q.ChannelCredentialRow>(q.selectRevokedChannels())).map((m) => [
              m.destination,
              m,
            ]),
      );
      const byDest = new Map<string, q.DeliveryRow[]>();
      for (const row of rows) {
        const list = byDest.get(row.destination) ?? [];
        list.push(row);
        byDest.set(row.destination, list);
      }
      // Sorted, so two engines lock endpoints in the same order and never deadlock.
      for (const dest of [...byDest.keys()].sort()) {
        const group = byDest.get(dest) ?? [];
        const mark = marks.get(dest);
        const marked = mark ? channels[dest] : undefined;
        if (mark && marked) {
          if (credentialFingerprint(marked, this.o.secret) === mark.fingerprint) {
            // Revoked at the provider: fail fast with the fix, rather than repeat the refusal.
            for (const row of group)
              refused.push({ ...refusal(row, revokedRefusal(dest, mark)), channelRevoked: true });
            continue;
          }
          // The credential changed since it was refused (a restart, a reload): try it again.
          if ((await tx.query(q.clearChannelRevoked(dest))).length > 0)
            restored.push(restoredEvent(dest, mark.since, 'credential_changed'));
        }
        const state = await loadEndpoint(tx, dest, now, this.o.policies);
        const { state: next, verdicts } = admitGroup(state, group.length, now, this.o.policies);
        await saveEndpoint(tx, dest, next, now);
        for (const [i, row] of group.entries()) {
          const v = verdicts[i] ?? { kind: 'send' };
          if (v.kind === 'defer') {
            await tx.query(q.deferDelivery(row.id, v.at, now, v.why));
            this.o.metrics?.outcomes.inc({ destination: dest, outcome: 'deferred' });
            continue;
          }
          const entry = channels[dest];
          const sender = entry ? undefined : this.o.dynamic?.(dest);
          if (sender) {
            const message = v.kind === 'refuse' ? undefined : parseMessage(row.message ?? '');
            if (message) ready.push({ row, kind: senderKind(sender), config: undefined, message });
            else
              refused.push(refusal(row, v.kind === 'refuse' ? v.reason : 'stored payload is not valid JSON'));
            continue;
          }
          const reason =
            v.kind === 'refuse' ? v.reason : !entry ? `channel ${dest} is no longer configured` : undefined;
          const kind = entry ? channelKind(entry.type) : undefined;
          const config = entry && kind ? this.channelConfig(channels, dest, kind, entry) : undefined;
          if (reason || !kind || config instanceof Error || !row.message) {
            const why =
              reason ??
              (!kind
                ? `unknown channel type ${entry?.type}`
                : config instanceof Error
                  ? `channel ${dest} config is invalid`
                  : 'no message stored');
            refused.push(refusal(row, why));
            continue;
          }
          const message = parseMessage(row.message);
          if (!message) {
            // A row no attempt can ever send must not roll back the claim of the whole batch.
            refused.push(refusal(row, 'stored message is not valid JSON'));
            continue;
          }
          ready.push({ row, kind, config, message });
        }
      }
      if (restored.length > 0) await this.o.log.appendMany(restored, tx);
      return ready;
    })();
    return { ready: prepared, full, refused, restored };
  }

  /** A configured channel's kind and parsed config, as a claim would send it; undefined when a claim must refuse it. */
  private configuredSend(dest: string): Pick<Prepared, 'kind' | 'config'> | undefined {
    const channels = this.o.channels();
    const entry = channels[dest];
    const kind = entry ? channelKind(entry.type) : undefined;
    if (!entry || !kind) return undefined;
    const config = this.channelConfig(channels, dest, kind, entry);
    return config instanceof Error ? undefined : { kind, config };
  }

  private channelConfig(
    channels: Record<string, ChannelEntry>,
    dest: string,
    kind: AnyChannelKind,
    entry: ChannelEntry,
  ): unknown {
    let cache = this.parsed.get(channels);
    if (!cache) {
      cache = new Map();
      this.parsed.set(channels, cache);
    }
    if (!cache.has(dest)) {
      const r = kind.configSchema.safeParse(entry);
      cache.set(dest, r.success ? r.data : new Error('invalid'));
    }
    return cache.get(dest);
  }

  private async send(p: Prepared): Promise<Finished | undefined> {
    const attempt = Number(p.row.attempts) + 1;
    const { result, outcome, providerId } = await resumeSpan(
      p.row.id,
      'delivery.attempt',
      {
        'switchboard.delivery_id': p.row.id,
        'switchboard.destination': p.row.destination,
        'switchboard.attempt': attempt,
      },
      () =>
        attemptDelivery(p.kind, p.config, p.message, attempt, {
          egress: this.o.egress,
          policy: this.o.policies.retry,
          timeoutMs: this.o.policies.timeoutMs,
          maxResponseBytes: this.o.policies.maxResponseBytes,
          now: this.o.now,
          secret: this.o.secret,
          ...(this.o.smtp ? { smtp: this.o.smtp } : {}),
          ...(this.o.random ? { random: this.o.random } : {}),
        }),
      (r) => r.outcome.kind !== 'retry',
    );
    this.o.metrics?.latency.observe({ destination: p.row.destination }, result.durationMs / 1000);
    const kept =
      Number(p.row.priority) === 1
        ? keepTrying(
            outcome,
            p.row.channel_type,
            this.o.policies.retry,
            this.o.now(),
            this.o.random ?? Math.random,
          )
        : outcome;
    return {
      row: p.row,
      attempt,
      result,
      outcome: kept,
      ...(providerId ? { providerId } : {}),
      ...(asksFirst(p.config) ? { askFirst: true } : {}),
    };
  }

  /** Rows, endpoint states and attempt events of a batch, in one transaction. */
  private async complete(batch: Finished[]): Promise<undefined>;
  /** With `claimNext`, the next batch is claimed in the same transaction (a backlog: see `pass`). */
  private async complete(
    batch: Finished[],
    claimNext: true,
  ): Promise<{ prepared: Prepared[]; full: boolean }>;
  private async complete(
    batch: Finished[],
    claimNext?: true,
  ): Promise<undefined | { prepared: Prepared[]; full: boolean }> {
    const now = this.o.now();
    let written: Recorded | undefined;
    let next: Claimed | undefined;
    await this.o.db.tx(async (tx) => {
      written = await recordBatch(tx, batch, now, this.o);
      if (claimNext) next = await this.claimIn(tx, now);
    });
    for (const [dest, level] of written?.levels ?? [])
      this.o.metrics?.breaker.set({ destination: dest }, level);
    this.appended(written?.types ?? []);
    return next ? this.claimed(next) : undefined;
  }

  private appended(types: string[]): void {
    if (types.length === 0) return;
    this.o.onAppended?.(types);
  }
}
