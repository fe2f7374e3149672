import { readJsonText } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import type { AskApprovalArgs } from '../notify/schema.js';
import type { ReportContext } from '../notify/port.js';
import type { ApprovalService, ApprovalView } from '../approvals/port.js';
import type { ApprovalOutcome, ProgressSink } from './tools.js';

/**
 * How long one wait lasts before a progress notification: well inside the SDK's 60 s default
 * request timeout, so a client with `resetTimeoutOnProgress` keeps waiting while a person decides.
 */
export const APPROVAL_PROGRESS_EVERY_MS = 10_000;

/** `payload_json` must hold a JSON object: its digest is what the approver approves. */
export function parsePayload(json: string): Record<string, unknown> {
  const read = readJsonText(json);
  if (!read.ok && read.code === 'invalid_json')
    throw new AppError('validation_failed', 'payload_json is not valid JSON');
  if (!read.ok) throw new AppError(read.code, `payload_json is refused: ${read.message}`);
  const value = read.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('validation_failed', 'payload_json must be a JSON object');
  }
  return value as Record<string, unknown>;
}

export function outcomeOf(
  view: Pick<ApprovalView, 'state' | 'capability' | 'comment'> | undefined,
  id: string,
): ApprovalOutcome {
  const comment = view?.comment ? { comment: view.comment } : {};
  if (view?.state === 'approved')
    return {
      outcome: 'approved',
      approval_id: id,
      ...(view.capability ? { capability: view.capability } : {}),
      ...comment,
    };
  if (view?.state === 'rejected') return { outcome: 'rejected', approval_id: id, ...comment };
  return { outcome: 'timeout', approval_id: id };
}

/** Asks through the approvals service and waits in slices, telling the client it is still waiting. */
export async function askViaService(
  approvals: ApprovalService | undefined,
  args: AskApprovalArgs,
  ctx: ReportContext,
  progress: ProgressSink,
  signal: AbortSignal,
  sliceMs = APPROVAL_PROGRESS_EVERY_MS,
): Promise<ApprovalOutcome> {
  if (!approvals) throw new AppError('not_ready', 'the approvals module is not running');
  const view = await approvals.request({
    action: args.action,
    reason: args.reason,
    plan: { tool: 'ask_approval', input: parsePayload(args.payload_json), action: args.action },
    ...(ctx.task_id ? { task_id: ctx.task_id } : {}),
    ...(ctx.session_id ? { session_id: ctx.session_id } : {}),
    requested_by: ctx.principal,
  });
  let current: ApprovalView | undefined = view;
  await progress(`waiting for a decision on ${view.id}`);
  while (current?.state === 'pending' && !signal.aborted) {
    current = await approvals.wait(view.id, sliceMs, signal);
    if (current?.state === 'pending') await progress(`still waiting for a decision on ${view.id}`);
  }
  return outcomeOf(current, view.id);
}
