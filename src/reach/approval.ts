import type { Channel } from './config.js';
import { approvalRequired, intentOf } from './events.js';
import type { Concurrency } from './guard.js';
import type { TouchCaller } from './port.js';
import type { TouchResponse } from './protocol.js';
import { failed } from './protocol.js';
import type { Tool } from './registry.js';
import { execute, finish, type RunScope, type TouchOptions } from './run.js';
import * as q from './sql.js';

/**
 * The approval path of a touch: a touch the gate sent to a person waits (`awaiting_approval`) until
 * the caller asks again with its request id (sync) or the background wait sees the decision (async).
 * Approved → the approval's re-check, then the run path (run.ts); rejected, expired or re-check
 * refused → DENIED, logged as the touch's completion. A request id seen before answers its stored
 * result, so a retry never runs a tool twice.
 */

/** How long an async touch waits in the background for a person (approvals expire well before). */
export const APPROVAL_WAIT_MS = 24 * 3_600_000;

/** What the approval path needs of the engine beyond a run's scope. */
export interface ApprovalScope extends RunScope {
  concurrency: Concurrency;
  row(caller: string, requestId: string): Promise<q.TouchRow | undefined>;
  status(caller: string, requestId: string, known?: q.TouchRow): Promise<TouchResponse | undefined>;
}

/** The touch as asked again: the tool, the params and their digest, and how the caller wants it. */
export interface Asked {
  tool: Tool;
  digest: string;
  params: Record<string, unknown>;
  c: TouchCaller;
  channel: Channel;
  timeoutMs: number;
  retry: number;
  o: TouchOptions;
  cost: () => number;
}

/** An async touch that needs a person: waits for the decision in the background, then runs. */
export async function waitThenRun(
  s: ApprovalScope,
  caller: string,
  requestId: string,
  approvalId: string,
  a: Asked,
): Promise<void> {
  const approvals = s.d.approvals();
  if (!approvals) return;
  const view = await approvals.wait(approvalId, APPROVAL_WAIT_MS, s.stopping);
  if (!view || view.state === 'pending') return; // the gateway stops: a POST with the same id resumes
  const row = await s.row(caller, requestId);
  if (row?.status === 'awaiting_approval') await again(s, row, { ...a, channel: 'async', o: {} });
}

/** A request id seen before: same touch → its answer (or its approval's); another touch → refused. */
export async function again(s: ApprovalScope, row: q.TouchRow, a: Asked): Promise<TouchResponse> {
  const { tool } = a;
  if (row.tool !== tool.name || row.params_digest !== a.digest)
    return failed(
      row.request_id,
      {
        code: 'INVALID_PARAMS',
        message: `request_id ${row.request_id} was used for another touch; give this one a new request_id`,
        details: { problems: [{ path: 'request_id', message: 'is already used', keyword: 'request_id' }] },
      },
      a.cost(),
    );
  if (row.status === 'awaiting_approval') {
    const release = s.concurrency.tryAcquire(tool.name, tool.concurrency);
    if (!release)
      return failed(
        row.request_id,
        {
          code: 'CONCURRENCY_LIMIT',
          message: `${tool.name} already runs ${tool.concurrency} calls, its limit; retry in a moment`,
          details: { limit: tool.concurrency },
        },
        a.cost(),
      );
    try {
      return await resume(s, row, { ...a, o: { ...a.o, wait: a.o.wait ?? a.channel !== 'async' } });
    } finally {
      release();
    }
  }
  return (await s.status(a.c.principal.name, row.request_id, row))!;
}

/** The retry of a touch that waited for a person: approved → the re-check, then the run. */
async function resume(s: ApprovalScope, row: q.TouchRow, a: Asked): Promise<TouchResponse> {
  const { d } = s;
  const { tool, c } = a;
  const approvalId = row.approval_id!;
  const view = await d.approvals()?.get(approvalId);
  const cause = { task_id: row.task_id, session_id: c.session_id ?? null };
  const run = {
    tool,
    params: a.params,
    c,
    owner: row.owner,
    requestId: row.request_id,
    cause,
    timeoutMs: a.timeoutMs,
    retry: a.retry,
    o: a.o,
    cost: a.cost,
  };
  // The intent's chain, through the approval's request event: the run joins it (src/effects trace).
  const chain = view?.correlation_id ?? null;
  const refusal = (code: 'DENIED', reason: string, message: string) =>
    finish(
      d,
      run,
      { error: { code, message, details: { reason_code: reason, approval_id: approvalId } } },
      a.cost(),
    );
  if (!view || view.state === 'pending')
    return {
      request_id: row.request_id,
      ok: false,
      status: 'awaiting_approval',
      error: approvalRequired(approvalId, 'PENDING', row.request_id),
      cost_ms: a.cost(),
    };
  if (view.state === 'rejected')
    return refusal(
      'DENIED',
      'APPROVAL_REJECTED',
      `a person rejected ${tool.name}${view.comment ? `: ${view.comment}` : ''}`,
    );
  if (view.state === 'expired')
    return refusal(
      'DENIED',
      'APPROVAL_EXPIRED',
      `nobody approved ${tool.name} in time; ask again with a new request_id`,
    );
  if (view.recheck?.outcome === 'no_capability')
    return refusal(
      'DENIED',
      'APPROVAL_RECHECK_DENIED',
      `${tool.name} was approved, but the policy in force no longer allows it`,
    );
  // The approval's capability is checked where it is used: one minted before a freeze (a breaker's
  // trip) or a revocation no longer runs a side effect (issue 20 point 3; reach/frozen.test.ts).
  const gate = d.gate();
  if (view.capability && gate?.verifyIssued) {
    const intent = intentOf(tool, a.params, c);
    const checked = await gate.verifyIssued({
      token: view.capability.token,
      plan: {
        tool: intent.tool,
        action: intent.action ?? null,
        resource: intent.resource ?? null,
        input: intent.input,
      },
    });
    if (!checked.ok)
      return refusal(
        'DENIED',
        checked.reason === 'FROZEN' ? 'FROZEN_READ_ONLY' : `CAPABILITY_${checked.reason}`,
        `${tool.name} was approved, but its capability no longer holds: ${checked.detail ?? checked.reason}`,
      );
  }
  const claimed = await d.db.query(
    q.markRunning(d.tenant, row.caller, row.request_id, d.now() + a.timeoutMs, d.now()),
  );
  if (claimed.length === 0) return (await s.status(row.caller, row.request_id))!;
  return execute(s, run, view.plan_digest, {
    plan_digest: view.plan_digest,
    capability_id: view.capability?.id ?? null,
    // The revision serving when it runs: the approval's re-check was made under it.
    policy_revision: d.gate()?.policy?.().revision ?? null,
    approval_id: approvalId,
    correlation_id: chain,
  });
}
