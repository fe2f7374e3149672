import { causedBy, type Envelope } from '../envelope/index.js';
import type { SignalsDeps } from './module.js';
import { approvalPlan } from '../gate/port.js';
import type { PhoneApprovals, PhoneEscalation } from '../signals/port.js';
import { readAway, TENANT_OWNER } from './away.js';
import type { SignalsConfig } from './config.js';
import { branchOf, projectOf } from './context.js';
import * as q from './sql.js';
import { truncate } from '../text/index.js';

/** Below this, holding the hook is not worth a buzz on the phone: the desk gets the prompt at once. */
export const MIN_HOLD_MS = 1_000;

/**
 * A runtime's "waiting for your permission" notification that follows a prompt already on the phone is
 * the same prompt told twice. It is folded for this long after the approval was created, beyond the
 * hold itself (the runtime raises it when its own dialog appears, right after the hook gave up).
 */
export const NOTIFICATION_FOLD_GRACE_MS = 120_000;

/** What a phone shows as who is asking. */
const RUNTIME_NAMES: Readonly<Record<string, string>> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  'gemini-cli': 'Gemini CLI',
  hermes: 'Hermes',
  openclaw: 'OpenClaw',
  cursor: 'Cursor',
};

const ACTION_MAX = 200;

/** The runtime session a hook belongs to, as the signals tables key it. */
export function sessionKeyOf(runtime: string, sessionId: string | null | undefined): string {
  return `${runtime}:${sessionId ?? ''}`;
}

/**
 * Pure: the approval's `action` (what would run) and `reason` (who asks, and where) for a permission
 * prompt. The content gate runs on both when notify announces the approval.
 */
export function promptText(
  runtime: string,
  intent: PhoneEscalation['intent'],
  ctx: { project?: string; branch?: string; session?: string },
): { action: string; reason: string } {
  const input = intent.input;
  const detail = [input.command, input.file_path, input.url, input.pattern].find(
    (v): v is string => typeof v === 'string' && v.length > 0,
  );
  const head = detail ? `${intent.tool}: ${detail.replace(/\s+/g, ' ')}` : intent.tool;
  const action = truncate(head, ACTION_MAX);
  const lines = [`${RUNTIME_NAMES[runtime] ?? runtime} asks for permission to use ${intent.tool}`];
  if (ctx.project) lines.push(`project: ${ctx.project}`);
  if (ctx.branch) lines.push(`branch: ${ctx.branch}`);
  if (ctx.session) lines.push(`session: ${ctx.session}`);
  return { action, reason: lines.join('\n') };
}

/**
 * The signals module's side of a permission prompt no rule decided: while the owner is away, an
 * approval (which notify announces with buttons, on the priority lane); otherwise nothing, so the
 * prompt stays at the desk. Every outcome is in the log.
 */
export class PhoneDesk implements PhoneApprovals {
  constructor(
    private readonly s: SignalsDeps,
    private readonly cfg: SignalsConfig,
  ) {}

  async escalate(req: PhoneEscalation): Promise<{ approval_id: string; hold_ms: number } | undefined> {
    const approvals = this.s.approvals;
    if (!this.cfg.enabled || !this.cfg.permissions.to_phone || !approvals) return undefined;
    const hold = Math.min(this.cfg.permissions.wait_seconds * 1000, req.maxHoldMs);
    if (hold < MIN_HOLD_MS) {
      await this.atDesk(req.cause, 'no_time_to_hold', { hold_ms: Math.max(0, Math.floor(hold)) });
      return undefined;
    }
    const now = this.s.now();
    const taskId = req.principal.task_id;
    const task = taskId ? await this.s.tasks?.get(taskId) : undefined;
    const owner = task?.owner ?? TENANT_OWNER;
    const away = await readAway(this.s.db, owner, this.cfg, now);
    if (!away.effective) {
      await this.atDesk(req.cause, 'owner_not_away');
      return undefined;
    }
    const runtime = req.cause.runtime?.kind ?? req.intent.runtime ?? '';
    const sessionId = req.cause.execution.session_id ?? undefined;
    const cwd = typeof req.raw.cwd === 'string' ? req.raw.cwd : undefined;
    const project = projectOf(cwd);
    const branch = branchOf(req.raw, cwd);
    const text = promptText(runtime, req.intent, {
      ...(project ? { project } : {}),
      ...(branch ? { branch } : {}),
      ...(sessionId ? { session: sessionId } : {}),
    });
    const view = await approvals.request({
      action: text.action,
      reason: text.reason,
      plan: approvalPlan(req.intent),
      ...(taskId ? { task_id: taskId } : {}),
      ...(sessionId ? { session_id: sessionId } : {}),
      requested_by: req.principal,
      // The approval lives exactly as long as the hook waits for it: a tap after that would decide
      // nothing the runtime hears, so it meets an expired approval and a page that says so.
      ttl_ms: hold,
      cause: req.cause,
    });
    await this.s.db.query(q.recordPhoneApproval(view.id, sessionKeyOf(runtime, sessionId), owner, now));
    return { approval_id: view.id, hold_ms: hold };
  }

  /** The prompt stays at the desk; the log says why the phone was not asked. */
  private async atDesk(
    cause: Envelope,
    reason: 'owner_not_away' | 'no_time_to_hold',
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await this.s.emit(
      causedBy(cause, {
        type: 'agent.notification.suppressed',
        redacted_summary: {
          reason,
          signal: 'permission_request',
          stage: 'awaiting_approval',
          reports: [],
          ...extra,
        },
      }),
    );
  }
}
