/**
 * What notify hands to the modules that carry its messages (channels render a `Message`, delivery
 * queues it, signals map onto `Stage` and `Severity`). Notify owns these types and imports no
 * channel or delivery file; the consumers import them from here.
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
