import type { Logger } from 'pino';
import { type Envelope, type EnvelopeInput, newId } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { type GateDecision, type GateService, gateUnavailable } from '../gate/port.js';
import type { Principal } from '../kernel/module.js';
import type { Db } from '../store/port.js';
import type { TaskService } from '../tasks/port.js';
import { type Asked, endedEvent, intentOf, requestedEvent, routedEvent } from './events.js';
import { agentNode, type WaitGraph } from './graph.js';
import type { Attempt, CollaborationRequest, Receipt } from './port.js';
import { type AgentRecord, EWMA_ALPHA, type Registry } from './registry.js';
import type { Remote, RemoteOutcome } from './remote.js';
import type { RouteResult } from './route.js';
import * as q from './sql.js';
import { cycleError, decide, type SharedWaits, sharedWaits, WAIT_GRACE_MS } from './waits.js';

/**
 * The collaboration engine: request → limits → route (cycles excluded) → the gate → the remote call
 * (remote.ts) → the receipt, with one fallback to the next-best agent when an attempt fails or times
 * out. The wait-for graph holds an edge per open attempt; a request whose every candidate would close
 * a cycle is refused at once with COLLABORATION_CYCLE (agents.test.ts).
 */

/**
 * Collaborations one waiter may have open at once: a model fanning a job out to a handful of agents
 * is work, one asking dozens at once is a storm (the derived-task storm control's spirit).
 */
export const MAX_FAN_OUT = 8;

export interface EngineDeps {
  db: Db;
  tenant: string;
  now: () => number;
  logger: Logger;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  gate(): GateService | undefined;
  tasks(): TaskService | undefined;
  registry: Registry;
  remote: Remote;
  ttlMs: number;
  /** `loop.max_depth`: a chain of collaborations deeper than this is refused, as derived tasks are. */
  maxDepth: number;
  /** This process, on the wait rows it writes (the cluster's replica id, else one per start). */
  replica: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** One attempt's outcome as the store's EWMAs take it (sql.ts recordOutcome). */
interface Outcome {
  id: string;
  ok: boolean;
  answered: boolean;
  latencyMs: number;
}

export class Engine {
  /**
   * SQLite is one gateway: the wait-for graph is this process's open attempts, held here (key
   * `<ref id>:<attempt>`), checked and added to with no await in between, so no row is needed for a
   * cycle to be refused; the row is written only for a recovery, once a job outlasts its first look.
   */
  private readonly local = new Map<string, q.WaitRow>();

  constructor(private readonly d: EngineDeps) {}

  private get inMemory(): boolean {
    return this.d.db.dialect === 'sqlite';
  }

  /** Every replica's open attempts, read at each request: the graph a cycle is checked against. */
  private async waits(db: Db = this.d.db): Promise<SharedWaits> {
    if (this.inMemory) return sharedWaits([...this.local.values()]);
    return sharedWaits(await db.query<q.WaitRow>(q.selectWaits(this.d.tenant, this.d.now())));
  }

  /** SQLite: the edge joins this process's graph unless it closes a cycle (synchronous: exact). */
  private addLocal(a: Asked, agent: string, attempt: number, depth: number): void {
    const cycle = sharedWaits([...this.local.values()]).graph.cycleIf(a.waiter, agentNode(agent));
    if (cycle) throw cycleError(cycle);
    this.local.set(`${a.refId}:${attempt}`, { waiter: a.waiter, agent, depth });
  }

  private dropLocal(refId: string): void {
    for (const n of [1, 2]) this.local.delete(`${refId}:${n}`);
  }

  private waitRow(a: Asked, agent: string, attempt: number, depth: number, score: number, started: number) {
    return q.insertWait({
      tenant: this.d.tenant,
      refId: a.refId,
      attempt,
      waiter: a.waiter,
      agent,
      depth,
      replica: this.d.replica,
      expiresAt: started + a.req.timeout_ms + WAIT_GRACE_MS,
      score,
      startedAt: started,
    });
  }

  /**
   * Inside the transaction that opens an attempt: with the edges locked (PostgreSQL) or the writer
   * held (SQLite), the graph is read again and the edge added only if it still closes no cycle, so two
   * requests on two replicas cannot close one between them (replicas.test.ts).
   */
  private async openWait(
    tx: Db,
    a: Asked,
    agent: string,
    attempt: number,
    depth: number,
    score: number,
  ): Promise<void> {
    if (this.inMemory) this.addLocal(a, agent, attempt, depth);
    else {
      const lock = q.lockWaits(tx.dialect, this.d.tenant);
      if (lock) await tx.query(lock);
      const { graph } = await this.waits(tx);
      const cycle = graph.cycleIf(a.waiter, agentNode(agent));
      if (cycle) throw cycleError(cycle);
    }
    await tx.query(this.waitRow(a, agent, attempt, depth, score, this.d.now()));
  }

  /** Who waits: the key's task, else `from_task_id`'s, else the agent the key is bound to, else the key. */
  private waiterOf(req: CollaborationRequest, caller: Principal): { waiter: string; taskId: string | null } {
    if (caller.task_id) {
      if (req.from_task_id && req.from_task_id !== caller.task_id)
        throw new AppError('forbidden', 'from_task_id: a task key asks for its own task only');
      return { waiter: `task:${caller.task_id}`, taskId: caller.task_id };
    }
    if (req.from_task_id) return { waiter: `task:${req.from_task_id}`, taskId: req.from_task_id };
    if (this.d.registry.has(caller.name)) return { waiter: agentNode(caller.name), taskId: null };
    return { waiter: `key:${caller.name}`, taskId: null };
  }

  private depthOf(
    waiter: string,
    task: { lineage: { depth: number } } | undefined,
    serving: ReadonlyMap<string, number>,
  ): number {
    if (task) return task.lineage.depth;
    if (!waiter.startsWith('agent:')) return 0;
    return serving.get(waiter.slice('agent:'.length)) ?? 0;
  }

  private decide(graph: WaitGraph, a: Asked, tried?: ReadonlySet<string>): RouteResult {
    return decide(graph, this.d.registry.withSkill(a.req.skill), a, this.d.now(), this.d.ttlMs, tried);
  }

  async collaborate(req: CollaborationRequest, caller: Principal): Promise<Receipt> {
    const refId: string = newId('collaboration', this.d.now());
    try {
      return await this.run(refId, req, caller);
    } finally {
      this.dropLocal(refId);
    }
  }

  private async run(refId: string, req: CollaborationRequest, caller: Principal): Promise<Receipt> {
    const { waiter, taskId } = this.waiterOf(req, caller);
    const taskView = taskId ? await this.d.tasks()?.get(taskId) : undefined;
    if (taskId && !taskView && this.d.tasks())
      throw new AppError('not_found', `from_task_id: no task ${taskId}`);
    const a: Asked = {
      refId,
      req,
      caller,
      waiter,
      task: taskView ? { id: taskView.id, correlation_id: taskView.correlation_id } : null,
    };
    const shared = await this.waits();
    const depth = this.depthOf(waiter, taskView, shared.serving) + 1;
    if (depth > this.d.maxDepth)
      throw new AppError(
        'COLLABORATION_LIMIT',
        `the collaboration would be ${depth} levels deep; loop.max_depth allows ${this.d.maxDepth}`,
        { depth, max_depth: this.d.maxDepth },
      );
    const open = shared.graph.outDegree(waiter);
    if (open >= MAX_FAN_OUT)
      throw new AppError(
        'COLLABORATION_LIMIT',
        `${waiter} already waits on ${open} collaborations (at most ${MAX_FAN_OUT} at once); finish some first`,
        { open, max_fan_out: MAX_FAN_OUT },
      );

    const first = this.decide(shared.graph, a);
    if (first.kind !== 'chosen') {
      const candidates = first.kind === 'no_skill' ? [] : first.candidates;
      const considered = first.kind === 'no_skill' ? 0 : first.considered;
      await this.d.db.tx(async (tx) => {
        const requested = await this.d.emit(requestedEvent(a), tx);
        await this.d.emit(
          routedEvent(requested, a, 1, { chosen: null, refused: first.kind }, candidates, considered),
          tx,
        );
      });
      throw this.refusal(req.skill, first);
    }

    const started = this.d.now();
    const opening = {
      refId,
      tenant: this.d.tenant,
      caller: caller.name,
      waiter,
      fromTaskId: a.task?.id ?? null,
      skill: req.skill,
      now: started,
    };
    let requested: Envelope | undefined;
    const score1 = round6(first.score);
    // The request, the routing and the receipt row are written with the gate's request and decision.
    // PostgreSQL: inside the gate's decision transaction, with the wait row (other replicas must see
    // the edge), one commit before the call. SQLite: the gate decides at once and hands its writes
    // back (`later`); the edge is held in memory, and the writes join the commit that holds the
    // receipt, or the one that records a job still running after its first look, or a refusal's:
    // one commit per collaboration that is done by then (bench `agents`).
    let deferred: ((tx: Db) => Promise<Envelope>) | undefined;
    const flush = async (tx: Db) => {
      const write = deferred;
      deferred = undefined;
      if (write) await write(tx);
    };
    const decision = await this.ask(
      a,
      first.agent,
      async (tx) => {
        const e = await this.d.emit(requestedEvent(a), tx);
        await this.d.emit(
          routedEvent(e, a, 1, { chosen: first.agent }, first.candidates, first.considered),
          tx,
        );
        if (!this.inMemory) await this.openWait(tx, a, first.agent, 1, depth, score1);
        await tx.query(q.insertCollaboration({ ...opening, eventId: e.event_id }));
        requested = e;
        return e;
      },
      undefined,
      this.inMemory
        ? (commit) => {
            deferred = commit;
          }
        : undefined,
    );
    if (decision.decision !== 'allow') {
      await this.d.db.tx(async (tx) => {
        await flush(tx);
        if (requested) {
          await tx.query(q.deleteWaits(refId));
          await tx.query(q.deniedCollaboration(refId, decision.reason_code, this.d.now()));
        } else {
          // No gate ran (fail closed): nothing was written yet.
          const e = await this.d.emit(requestedEvent(a), tx);
          await this.d.emit(
            routedEvent(e, a, 1, { chosen: first.agent, decision }, first.candidates, first.considered),
            tx,
          );
        }
      });
      throw denied(decision, first.agent, req.skill);
    }
    if (deferred) {
      try {
        // A cycle closed by a request that was routed while the gate decided this one.
        this.addLocal(a, first.agent, 1, depth);
      } catch (err) {
        await this.d.db.tx(async (tx) => {
          await flush(tx);
          await tx.query(q.cycleCollaboration(refId, (err as Error).message, this.d.now()));
        });
        throw err;
      }
    } else if (!requested) throw new Error('the requested event was not recorded');
    /** The writes the first attempt still holds back (SQLite), into `tx`; the event that caused them. */
    const recorded = async (tx: Db): Promise<Envelope> => {
      await flush(tx);
      if (!requested) throw new Error('the requested event was not recorded');
      return requested;
    };
    // A job still running after its first look: its wait row (SQLite: with the held-back writes).
    const running = (n: number, agent: string, score: number, t0: number) => async (remoteTask: string) => {
      const held = deferred;
      try {
        await this.d.db.tx(async (tx) => {
          await recorded(tx);
          if (this.inMemory && n === 1) await tx.query(this.waitRow(a, agent, n, depth, score, t0));
          await tx.query(q.setWaitTask(refId, n, remoteTask));
        });
      } catch (err) {
        // Rolled back: the held-back writes go with the receipt instead.
        if (held) {
          deferred = held;
          requested = undefined;
        }
        throw err;
      }
    };

    const attempts: Attempt[] = [];
    const outcomes: Outcome[] = [];
    let outcome = await this.attempt(
      a,
      first.agent,
      score1,
      attempts,
      outcomes,
      running(1, first.agent, score1, started),
    );
    if (outcome.kind !== 'completed' && req.fallback) {
      const next = this.decide((await this.waits()).graph, a, new Set(attempts.map((t) => t.agent)));
      if (next.kind === 'chosen') {
        // The fallback's decision is caused by the request: what the first attempt held back commits.
        // With its wait row, so no sweep takes the open collaboration for abandoned meanwhile.
        if (deferred)
          await this.d.db.tx(async (tx) => {
            await recorded(tx);
            await tx.query(this.waitRow(a, first.agent, 1, depth, score1, started));
          });
        const cause = requested!;
        const d2 = await this.ask(a, next.agent, undefined, cause);
        // The first attempt's wait row goes, the second's comes, with the decision: one commit.
        const opened = await this.d.db
          .tx(async (tx) => {
            await tx.query(q.deleteWaits(refId));
            this.local.delete(`${refId}:1`);
            // The attempts so far go on the receipt: a recovery that finds the second open lists both.
            await tx.query(q.updateAttempts(refId, JSON.stringify(attempts)));
            await this.d.emit(
              routedEvent(
                cause,
                a,
                2,
                { chosen: next.agent, decision: d2 },
                next.candidates,
                next.considered,
              ),
              tx,
            );
            if (d2.decision !== 'allow') return false;
            await this.openWait(tx, a, next.agent, 2, depth, round6(next.score));
            return true;
          })
          .catch((err: unknown) => {
            // A cycle closed since the first decision (another replica): no fallback, the receipt says why.
            if (err instanceof AppError && err.code === 'COLLABORATION_CYCLE') return false;
            throw err;
          });
        if (opened)
          outcome = await this.attempt(
            a,
            next.agent,
            round6(next.score),
            attempts,
            outcomes,
            running(2, next.agent, round6(next.score), this.d.now()),
          );
      }
    }
    const last = attempts[attempts.length - 1]!;
    const receipt: Receipt = {
      ref_id: refId,
      skill: req.skill,
      agent: last.agent,
      state: last.state,
      ...(outcome.kind === 'completed' ? { result: { text: outcome.text } } : {}),
      ...(outcome.kind === 'failed'
        ? { error: { code: 'AGENT_FAILED', message: outcome.reason } }
        : outcome.kind === 'timed_out'
          ? { error: { code: 'TIMED_OUT', message: `no answer within ${req.timeout_ms} ms` } }
          : {}),
      started_at: iso(started),
      finished_at: iso(this.d.now()),
      attempts,
      from_task_id: a.task?.id ?? null,
    };
    const moved = await this.d.db.tx(async (tx) => {
      const cause = await recorded(tx);
      await tx.query(this.updateOf(receipt));
      await tx.query(q.deleteWaits(refId));
      const rows: [string, q.OutcomeRow][] = [];
      for (const o of outcomes) {
        const [row] = await tx.query<q.OutcomeRow>(
          q.recordOutcome({ tenant: this.d.tenant, alpha: EWMA_ALPHA, now: this.d.now(), ...o }),
        );
        if (row) rows.push([o.id, row]);
      }
      await this.d.emit(endedEvent(cause, a, receipt), tx);
      return rows;
    });
    // The EWMAs as the store moved them: another replica's outcomes for the same agent count too.
    for (const [id, row] of moved) {
      const agent = this.d.registry.get(id);
      if (agent) this.d.registry.applyOutcome(agent, row);
    }
    return receipt;
  }

  private updateOf(r: Receipt) {
    return q.updateCollaboration({
      refId: r.ref_id,
      state: r.state,
      agent: r.agent,
      attempts: JSON.stringify(r.attempts),
      result: r.result ? JSON.stringify(r.result) : null,
      error: r.error ? JSON.stringify(r.error) : null,
      finishedAt: r.finished_at === null ? null : Date.parse(r.finished_at),
    });
  }

  private async ask(
    a: Asked,
    agent: string,
    record?: (tx: Db) => Promise<Envelope>,
    cause?: Envelope,
    later?: (commit: (tx: Db) => Promise<Envelope>) => void,
  ): Promise<GateDecision> {
    const gate = this.d.gate();
    if (!gate)
      // Fail closed, as reach does: without a policy nothing is delegated.
      return gateUnavailable();
    return gate.evaluate(intentOf(a, agent), {
      principal: a.caller,
      ...(record ? { record } : {}),
      ...(cause ? { cause } : {}),
      ...(later ? { later } : {}),
    });
  }

  private async attempt(
    a: Asked,
    agentId: string,
    score: number,
    attempts: Attempt[],
    outcomes: Outcome[],
    running: (taskId: string) => Promise<void>,
  ): Promise<RemoteOutcome> {
    const agent = this.d.registry.get(agentId) as AgentRecord;
    const t0 = this.d.now();
    const p0 = performance.now();
    const entry: Attempt = {
      agent: agentId,
      state: 'working',
      task_id: null,
      score,
      started_at: iso(t0),
      finished_at: null,
      latency_ms: null,
    };
    attempts.push(entry);
    this.d.registry.opened(agent);
    let outcome: RemoteOutcome;
    try {
      outcome = await this.d.remote.run(
        agent,
        a.req.skill,
        a.req.input,
        a.refId,
        a.req.timeout_ms,
        this.d.now,
        // A job still running after the first look: its task id on the attempt's row (one commit, only
        // for jobs that outlast SendMessage), so a recovery can cancel it if this process dies.
        async (taskId) => {
          entry.task_id = taskId;
          await running(taskId).catch((err: unknown) => {
            this.d.logger.warn(
              { ref_id: a.refId, err: (err as Error).message },
              'agents: the remote task id was not recorded; a recovery could not cancel it',
            );
          });
        },
      );
    } catch (err) {
      outcome = { kind: 'failed', taskId: null, reason: (err as Error).message, answered: false };
    }
    const latency = Math.round((performance.now() - p0) * 100) / 100;
    const now = this.d.now();
    entry.state = outcome.kind;
    entry.task_id = outcome.taskId;
    entry.finished_at = iso(now);
    entry.latency_ms = latency;
    if (outcome.kind === 'failed') entry.error = outcome.reason;
    if (outcome.kind === 'timed_out')
      entry.error = `no answer within ${a.req.timeout_ms} ms; the remote task was cancelled`;
    const o = {
      ok: outcome.kind === 'completed',
      answered: outcome.kind === 'completed' || (outcome.kind === 'failed' && outcome.answered),
      latencyMs: latency,
    };
    this.d.registry.closed(agent, now, o);
    outcomes.push({ id: agentId, ...o });
    return outcome;
  }

  private refusal(skill: string, r: Exclude<RouteResult, { kind: 'chosen' }>): AppError {
    if (r.kind === 'no_skill') {
      const skills = this.d.registry.skills();
      return new AppError(
        'NO_AGENT_FOR_SKILL',
        `no agent offers skill ${JSON.stringify(skill)}; skills: ${skills.join(', ') || 'none registered'}`,
        { skills },
      );
    }
    if (r.kind === 'cycle') return cycleError(r.cycle);
    const agents = this.d.registry.withSkill(skill).map((x) => ({
      id: x.id,
      status: x.status,
      last_seen: x.lastSeen === null ? null : iso(x.lastSeen),
    }));
    const busy = r.allTried;
    return new AppError(
      'NO_AGENT_AVAILABLE',
      `${busy ? 'no other' : 'every'} agent with skill ${skill} is down: ${agents
        .map((x) => `${x.id} (last seen ${x.last_seen ?? 'never'})`)
        .join(', ')}`,
      { agents },
    );
  }

  /** The receipt; a key sees its own (an admin every one). */
  async receipt(refId: string, caller: Principal): Promise<Receipt | undefined> {
    const [row] = await this.d.db.query<q.CollaborationRow>(q.selectCollaboration(this.d.tenant, refId));
    if (!row || (caller.role !== 'admin' && row.caller !== caller.name)) return undefined;
    return {
      ref_id: row.ref_id,
      skill: row.skill,
      agent: row.agent,
      state: row.state as Receipt['state'],
      ...(row.result ? { result: JSON.parse(row.result) as Receipt['result'] } : {}),
      ...(row.error ? { error: JSON.parse(row.error) as Receipt['error'] } : {}),
      started_at: iso(Number(row.started_at)),
      finished_at: row.finished_at === null ? null : iso(Number(row.finished_at)),
      attempts: JSON.parse(row.attempts) as Attempt[],
      from_task_id: row.from_task_id,
    };
  }
}

const round6 = (score: number) => Math.round(score * 1e6) / 1e6;

function denied(d: GateDecision, agent: string, skill: string): AppError {
  return new AppError(
    'DELEGATION_DENIED',
    d.reason ?? `the policy refused delegating ${skill} to ${agent} (${d.reason_code})`,
    {
      reason_code: d.reason_code,
      decision: d.decision,
      matched_rules: d.matched_rules.map((r) => r.id),
      ...(d.approval_id ? { approval_id: d.approval_id } : {}),
    },
  );
}
