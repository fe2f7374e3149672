import type { Principal } from '../kernel/module.js';
import { port } from '../kernel/port.js';
import type { Db } from '../store/port.js';

/**
 * What notify offers and needs. It hands the modules that carry its messages the `Message` contract
 * (channels render it, delivery queues it, signals map onto `Stage` and `Severity`); it offers the
 * `report_progress` path (`reporterPort`, for MCP and signals); and it declares where its messages go
 * (`outboundPort`, implemented by the delivery module). Notify imports no channel or delivery file.
 */

/**
 * One structured notification. The model fills this structure (through `report_progress` /
 * `ask_approval`); each channel's template renders it. Recipients are never part of it: they come
 * from the channel's config.
 */
export interface Message {
  kind: 'progress' | 'approval' | 'alert';
  stage: Stage;
  severity: Severity;
  title: string;
  /** At most 120 characters (the tool schema enforces it; channels still cap what they render). */
  summary: string;
  detail?: string;
  /** A link to the result; the content gate has already checked its domain. */
  artifact?: string;
  task?: { id: string; name?: string };
  agent?: string;
  /** Only a critical message mentions the owner; the notify module decides, the channel obeys. */
  mention?: boolean;
  /** Approve/reject targets; each points at the gateway's public URL. */
  actions?: ApprovalActions;
  /**
   * A signed reply page (`/r/{token}`) for a headless task that can be resumed: a "Reply" link or
   * button. What is typed there continues the task's session as data (docs/replies.md).
   */
  reply?: { url: string };
  locale?: Locale;
  /** Idempotency key: the same event renders to the same request and carries this id where the provider allows. */
  eventId: string;
}

export type Stage = 'started' | 'progress' | 'blocked' | 'awaiting_approval' | 'done' | 'failed';
export type Severity = 'info' | 'warn' | 'critical';
export type Locale = 'en' | 'zh';

export interface ApprovalActions {
  /** Signed one-time link: POST approves, GET shows the confirmation page (a GET never decides). */
  approveUrl: string;
  rejectUrl: string;
  /** The confirmation page, for channels that can only carry links. */
  pageUrl: string;
  approvalId: string;
}
/** Exactly the `report_progress` arguments (schema in schema.ts). */
export interface ProgressInput {
  stage: Stage;
  summary: string;
  detail?: string;
  artifact?: string;
  severity: Severity;
}

export type ProgressStatus = 'sent' | 'queued' | 'merged' | 'deduped' | 'rate_limited' | 'blocked';

export interface ProgressResult {
  /** The `agent.progress.reported` event: the report's id in the audit log. */
  id: string;
  status: ProgressStatus;
}

/** Who reports: from the key (or the task header checked against it), never from the body. */
export interface ReportContext {
  principal: Principal;
  task_id: string | null;
  session_id?: string;
  /**
   * The runtime turn a `done` ends (signals, while the owner is away): each turn's `done` is then sent
   * once, instead of one `done` per task or session.
   */
  turn_id?: string;
  /**
   * The key that reports, when `principal.name` names a scope instead (signals: `<key>:<project>:<session>`):
   * a freeze of that key stops its notifications.
   */
  key?: string;
}

/** The `report_progress` path with all its governance (notify provides it; MCP and signals use it). */
export interface Reporter {
  report(input: ProgressInput, ctx: ReportContext): Promise<ProgressResult>;
  /**
   * A tool call named recipients (`to`, `chat_id`, … — RECIPIENT_KEYS), which only the config may do:
   * records `agent.notification.blocked` and alerts the owner. The call itself is refused by its
   * schema; this is the "and alert" (seed 000) for callers whose schema check is not notify's own.
   */
  recipientsRefused?(tool: string, keys: string[], ctx: ReportContext): Promise<void>;
}

export const reporterPort = port<Reporter>('notify.reporter');

/**
 * Where notify's messages go: a queued delivery to a configured destination, in the caller's
 * transaction. Notify owns this interface and imports no delivery file; the delivery module implements
 * it (it provides this port), so the engine delivers what notify wrote.
 */
export interface Outbound {
  enqueue(
    tx: Db,
    req: {
      /** The event that causes the delivery: its id is the idempotency key (`webhook-id`, provider ids). */
      eventId: string;
      /** A channel name under `channels:`. */
      destination: string;
      message: Message;
      /** `high`: the priority lane (blocked, awaiting approval, failed): retried until delivered. */
      priority?: 'normal' | 'high';
    },
  ): Promise<{ id: string }>;
  /**
   * `enqueue`, and the row sent by this process right after the caller's commit when the engine can
   * admit it then (no claim transaction first); otherwise queued as `enqueue` queues it.
   */
  enqueueNow?: Outbound['enqueue'];
}

export const outboundPort = port<Outbound>('notify.outbound');
