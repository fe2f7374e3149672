import type { Context } from 'hono';
import { annotate, inSpan } from '../../trace/span.js';
import type { ApprovalView } from '../../approvals/port.js';
import type { Envelope, EnvelopeInput } from '../../envelope/index.js';
import { causedBy, readJsonText } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import { BRIDGE_HEADER, DEADLINE_HEADER } from './protocol.js';
import { GATE_UNAVAILABLE, START_GATEWAY_HINT, failsClosed, unavailableDecision } from './fail-closed.js';
import { readBody } from '../../kernel/body.js';
import type { AppEnv, Principal } from '../../kernel/module.js';
import type { RuntimesDeps } from '../module.js';
import type { GateIntent } from '../../gate/port.js';
import type { Db } from '../../store/port.js';
import { RUNTIME_KINDS, runtimeFor } from '../index.js';
import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtime.js';
import type { HooksConfig } from './config.js';
import { afterPhone, afterWait, forAdapter, holdMs, noOpinion } from './decision.js';
import { prefix } from '../../text/index.js';

const DAY_MS = 86_400_000;

/** `POST /v1/runtimes/:runtime/hooks`: record, ask the gate when the runtime waits, answer natively. */
export async function handleHook(c: Context<AppEnv>, s: RuntimesDeps, cfg: () => HooksConfig) {
  const name = c.req.param('runtime') ?? '';
  const adapter = runtimeFor(name);
  if (!adapter) {
    throw new AppError(
      'not_found',
      `no runtime named ${JSON.stringify(prefix(name, 40))}; known: ${RUNTIME_KINDS.join(', ')}`,
    );
  }
  const bytes = await readBody(c, s.config.server.body_limit_bytes);
  const n = adapter.normalize(bytes);
  const principal = c.get('principal');
  const decides = !n.problem && n.intent !== undefined && n.blocking;
  // A hook the gate decides is recorded inside the gate's decision transaction (one commit per call).
  if (!decides) await record(s, adapter, n, bytes, principal);
  await touch(s, n, adapter, principal);

  let reply: NativeReply;
  if (n.problem) reply = adapter.errorReply(n.problem);
  else if (decides) {
    const deadline = Number(c.req.header(DEADLINE_HEADER));
    const decision = await decide(s, adapter, n, principal, {
      waitSeconds: cfg().approval_wait_seconds,
      bytes,
      ...(Number.isFinite(deadline) && deadline > 0 ? { bridgeDeadlineMs: deadline } : {}),
      signal: c.req.raw.signal,
    });
    reply = adapter.reply(n, decision);
  } else reply = adapter.reply(n, null);

  const status = n.problem ? 400 : 200;
  const bridge = c.req.header(BRIDGE_HEADER) === '1';
  // A command-only runtime has no HTTP body; whoever calls for it gets the whole native reply.
  if (bridge || reply.httpBody === undefined) {
    return c.json({ exitCode: reply.exitCode, stdout: reply.stdout, stderr: reply.stderr }, status);
  }
  return c.json(reply.httpBody as Record<string, unknown>, status);
}

/**
 * The raw body goes to the vault; the envelopes point at it. One transaction, so neither is half-kept:
 * its own, or the caller's `tx` (the gate's decision transaction).
 */
async function record(
  s: RuntimesDeps,
  adapter: RuntimeAdapter,
  n: Normalized,
  bytes: Uint8Array,
  principal: Principal,
  db?: Db,
): Promise<Envelope> {
  return (db ?? s.db).tx(async (tx) => {
    const stored =
      bytes.byteLength > 0
        ? await s.vault.put(bytes, {
            tenantId: s.config.tenant.id,
            ttlMs: s.config.vault.retention_days * DAY_MS,
            db: tx,
          })
        : undefined;
    const appended: Envelope[] = [];
    for (const e of n.envelopes) {
      const input: EnvelopeInput = {
        ...e,
        runtime: { kind: adapter.kind, adapter_version: adapter.adapterVersion, ...e.runtime },
        execution: {
          ...e.execution,
          task_id: principal.task_id ?? null,
          session_id: n.sessionId ?? e.execution?.session_id ?? null,
        },
      };
      if (stored) Object.assign(input, { payload_ref: stored.ref, payload_digest: stored.digest });
      if (!e.actor?.agent_id) input.actor = { ...e.actor, agent_id: principal.name };
      appended.push(await s.emit(input, tx));
    }
    // Adapters always yield at least one envelope; the first carries the intent.
    return appended[0]!;
  });
}

/** Activity feeds the supervisor's stall detection; a failure here must not fail the agent's hook. */
async function touch(s: RuntimesDeps, n: Normalized, adapter: RuntimeAdapter, principal: Principal) {
  if (!s.tasks || !principal.task_id) return;
  try {
    await s.tasks.touch(principal.task_id, {
      step: n.intent !== undefined,
      ...(n.sessionId ? { session_id: n.sessionId } : {}),
      runtime: adapter.kind,
    });
  } catch (err) {
    s.logger.warn({ err, task_id: principal.task_id }, 'hook: could not record task activity');
  }
}

const PERMISSION_EVENT = 'agent.permission.requested';

/**
 * Records the hook inside the gate's transaction (`inside`), and knows whether that commit happened:
 * `ensure()` returns the committed event, recording it in a transaction of its own when the gate's
 * rolled back or never called `inside`.
 */
function recorder(
  s: RuntimesDeps,
  adapter: RuntimeAdapter,
  n: Normalized,
  bytes: Uint8Array,
  principal: Principal,
) {
  let committed: Envelope | undefined;
  return {
    inside: async (tx: Db): Promise<Envelope> => {
      const cause = await record(s, adapter, n, bytes, principal, tx);
      tx.afterCommit(() => {
        committed = cause;
      });
      return cause;
    },
    ensure: async (): Promise<Envelope> => {
      committed ??= await record(s, adapter, n, bytes, principal);
      return committed;
    },
  };
}

interface DecideOptions {
  waitSeconds: number | undefined;
  /** The hook's raw body: context for a prompt taken to the phone. */
  bytes: Uint8Array;
  bridgeDeadlineMs?: number;
  signal: AbortSignal;
}

async function decide(
  s: RuntimesDeps,
  adapter: RuntimeAdapter,
  n: Normalized,
  principal: Principal,
  opts: DecideOptions,
): Promise<Decision | null> {
  const intent = n.intent!;
  const recorded = recorder(s, adapter, n, opts.bytes, principal);
  const gateIntent: GateIntent = {
    tool: intent.tool,
    input: intent.input,
    runtime: adapter.kind,
    // Adapters always yield at least one envelope; the first carries the intent.
    event_type: n.envelopes[0]!.type,
    // One policy for every runtime: the adapter's canonical kind and args travel with the intent.
    ...(n.classified ? { kind: n.classified.kind, args: n.classified.args } : {}),
    ...(intent.action ? { action: intent.action } : {}),
    ...(intent.resource ? { resource: intent.resource } : {}),
    ...(principal.task_id ? { task_id: principal.task_id } : {}),
    ...(n.sessionId ? { session_id: n.sessionId } : {}),
  };
  let decision: Decision;
  let cause: Envelope;
  try {
    if (!s.gate) throw new Error('the gate module is not running');
    annotate({
      'switchboard.runtime': adapter.kind,
      'switchboard.session_id': n.sessionId ?? '',
      'switchboard.task_id': principal.task_id ?? '',
    });
    const gate = s.gate;
    decision = forAdapter(
      await inSpan('gate.evaluate', { 'switchboard.tool': intent.tool }, () =>
        gate.evaluate(gateIntent, { principal, record: recorded.inside }),
      ),
    );
    // A gate that did not call the recorder (another GateService) still gets the hook in the log.
    cause = await recorded.ensure();
  } catch (err) {
    // The decision transaction rolled back (or never ran): the hook is recorded on its own first.
    return unavailable(s, n, await recorded.ensure(), (err as Error).message);
  }
  if (noOpinion(decision)) {
    // No rule spoke: the runtime keeps its own permission flow. A permission prompt (the runtime is
    // about to ask a person) may instead go to the phone while the owner is away.
    return cause.type === PERMISSION_EVENT
      ? toPhone(s, adapter, n, principal, cause, gateIntent, opts)
      : null;
  }
  if (decision.decision === 'require_approval' && decision.approval_id && s.approvals) {
    const ms = holdMs(adapter, opts.waitSeconds, opts.bridgeDeadlineMs);
    if (ms > 0) {
      const id = decision.approval_id;
      const view = await s.approvals.wait(id, ms, holdSignal(s, opts)).catch((err: unknown) => {
        s.logger.warn({ err, approval_id: id }, 'hook: waiting for the approval failed');
        return undefined;
      });
      if (await endedByShutdown(s, id, view)) return stoppingDecision(id);
      decision = afterWait(decision, view);
    }
  }
  return decision;
}

const GATEWAY_STOPPING = 'GATEWAY_STOPPING';

/** A hold ends when the runtime hangs up or when the gateway begins to stop, whichever comes first. */
function holdSignal(s: RuntimesDeps, opts: DecideOptions): AbortSignal {
  return AbortSignal.any([opts.signal, s.stopping]);
}

/**
 * The gateway is stopping while the approval is still pending: it is withdrawn (expired, with its
 * event), so no `pending` approval outlives the hold nobody will answer now.
 */
async function endedByShutdown(s: RuntimesDeps, id: string, view: ApprovalView | undefined) {
  if (!s.stopping.aborted || view?.state !== 'pending') return false;
  await s.approvals?.withdraw?.(id, 'gateway_stopping').catch((err: unknown) => {
    s.logger.warn({ err, approval_id: id }, 'hook: could not withdraw the approval of a held hook');
  });
  return true;
}

/**
 * No decision, not a deny: the runtime's own desk dialog (Claude Code `ask`), as when the gateway is
 * down; a runtime without one gets its fail-closed answer (src/runtimes/http/fail-closed.ts).
 */
function stoppingDecision(id: string): Decision {
  return {
    decision: 'require_approval',
    reason_code: GATEWAY_STOPPING,
    reason: `the gateway is stopping, so approval ${id} was withdrawn undecided; ${START_GATEWAY_HINT}`,
  };
}

/**
 * A permission prompt no rule decided: the signals module takes it to the phone when the owner is away
 * (an approval with buttons), and the hook is held for the answer. Approve allows, reject denies with
 * the reason; anything else (no answer, the phone path off or failing) is no decision, so the
 * runtime's own dialog appears at the desk as usual.
 */
async function toPhone(
  s: RuntimesDeps,
  adapter: RuntimeAdapter,
  n: Normalized,
  principal: Principal,
  cause: Envelope,
  intent: GateIntent,
  opts: DecideOptions,
): Promise<Decision | null> {
  if (!s.phone || !s.approvals) return null;
  const approvals = s.approvals;
  try {
    const escalated = await s.phone.escalate({
      intent,
      principal,
      cause,
      raw: rawOf(opts.bytes),
      maxHoldMs: holdMs(adapter, undefined, opts.bridgeDeadlineMs),
    });
    if (!escalated) return null;
    const id = escalated.approval_id;
    const view = await approvals.wait(id, escalated.hold_ms, holdSignal(s, opts));
    // Stopping: the prompt stays at the desk (no decision), and the phone's approval is withdrawn.
    if (await endedByShutdown(s, id, view)) return null;
    return afterPhone(view);
  } catch (err) {
    s.logger.warn(
      { err, tool: n.intent?.tool },
      'hook: the phone approval failed; the prompt stays at the desk',
    );
    return null;
  }
}

function rawOf(bytes: Uint8Array): Record<string, unknown> {
  const read = readJsonText(Buffer.from(bytes).toString('utf8'));
  const v = read.ok ? read.value : undefined;
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * No decision could be had. Closed for tools not known read-only, open for the rest; either way the
 * outcome is in the log, caused by the request, so an audit shows why the call was refused or let by.
 */
async function unavailable(s: RuntimesDeps, n: Normalized, cause: Envelope, why: string) {
  s.logger.warn({ why, tool: n.intent?.tool }, 'hook: the gate is unavailable');
  const closed = failsClosed(n, 'closed');
  await s.emit(
    causedBy(cause, {
      type: closed ? 'agent.tool.denied' : 'agent.tool.authorized',
      subject: { tool: n.intent?.tool ?? null },
      redacted_summary: { reason_code: GATE_UNAVAILABLE, fail: closed ? 'closed' : 'open-read-only' },
    }),
  );
  return closed ? unavailableDecision(`the policy gate is unavailable (${why})`) : null;
}
