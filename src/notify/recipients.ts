import { AppError } from '../errors/index.js';
import type { Services } from '../kernel/module.js';
import type { ReportContext } from './port.js';
import type { Notifier } from './service.js';

/**
 * Seed 000: recipients live in the config only; a tool call that names one is refused *and* the
 * owner is told, because an agent reaching for `to:` is what a prompt injection looks like. The strict
 * schema already refuses the call (400); this records it and alerts.
 */

/** Argument names that choose who hears something. */
export const RECIPIENT_KEYS: ReadonlySet<string> = new Set([
  'to',
  'cc',
  'bcc',
  'recipient',
  'recipients',
  'channel',
  'channels',
  'chat_id',
  'channel_id',
  'user_id',
  'email',
  'phone',
  'webhook',
  'webhook_url',
  'url',
  'topic',
]);

/** The recipient keys a refused body tried to set, read from the strict schema's unrecognized keys. */
export function recipientKeysOf(err: unknown): string[] {
  if (!(err instanceof AppError) || err.code !== 'validation_failed') return [];
  const issues = (err.details ?? []) as { code?: string; path?: string; message?: string }[];
  const keys = issues
    .filter((i) => i.code === 'unrecognized_keys' && (i.path ?? '') === '')
    .flatMap((i) => [...(i.message ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1]!));
  return [...new Set(keys.filter((k) => RECIPIENT_KEYS.has(k)))];
}

export async function refuseRecipients(
  err: unknown,
  alert: (keys: string[]) => Promise<void>,
): Promise<void> {
  const keys = recipientKeysOf(err);
  if (keys.length > 0) await alert(keys);
}

/** The audit event, then a critical message to the owner through their own routes. */
/** The recipient keys among a tool call's argument names (an MCP `tools/call`'s `arguments`). */
export function recipientKeysIn(args: unknown): string[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  return Object.keys(args).filter((k) => RECIPIENT_KEYS.has(k));
}

export async function alertRecipientAttempt(
  notifier: Notifier,
  s: Services,
  keys: string[],
  ctx: ReportContext,
  tool = 'report_progress',
): Promise<void> {
  const agent = ctx.principal.name;
  await s.emit({
    type: 'agent.notification.blocked',
    actor: { agent_id: agent },
    execution: { task_id: ctx.task_id, ...(ctx.session_id ? { session_id: ctx.session_id } : {}) },
    subject: { tool },
    redacted_summary: { reason: 'recipient_in_tool_call', keys },
  });
  await notifier.report(
    {
      stage: 'blocked',
      summary: `${agent} tried to choose recipients (${keys.join(', ')}); refused`,
      detail: `A ${tool} call named recipients, which only the gateway config may do. It was refused and recorded. An agent reaching for recipients can be following injected instructions: check what it read.`,
      severity: 'critical',
    },
    ctx,
  );
}
