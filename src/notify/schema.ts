import { z } from 'zod';
import { ASK_LIMITS } from '../approvals/port.js';
import { readJsonText } from '../envelope/index.js';

/**
 * The tool schemas of CONTRACT.md, shared by `POST /v1/progress`, `/mcp` and `switchboard mcp`.
 * Strict: neither tool has a recipient, channel or chat id, and an argument smuggled in is refused.
 */

export const STAGES = ['started', 'progress', 'blocked', 'awaiting_approval', 'done', 'failed'] as const;
export const SEVERITIES = ['info', 'warn', 'critical'] as const;

export const reportProgressSchema = z.strictObject({
  stage: z
    .enum(STAGES)
    .describe('Where the task is: started, progress, blocked, awaiting_approval, done or failed.'),
  summary: z.string().max(120).describe('One line for a phone screen, at most 120 characters.'),
  detail: z.string().optional().describe('More text, shown below the summary.'),
  artifact: z.string().optional().describe('A link to the result (must be on an allowed domain).'),
  severity: z
    .enum(SEVERITIES)
    .default('info')
    .describe('info, warn or critical; only critical mentions the owner.'),
});

/** Whether `text` parses to a JSON object (the plan an approver approves is an object, never `[1]`). */
function isJsonObjectText(text: string): boolean {
  const read = readJsonText(text);
  return read.ok && typeof read.value === 'object' && read.value !== null && !Array.isArray(read.value);
}

export const askApprovalSchema = z.strictObject({
  action: z
    .string()
    .min(1)
    .max(ASK_LIMITS.action)
    .describe('What you want to do, in one line (shown as the title of the request).'),
  reason: z.string().min(1).max(ASK_LIMITS.reason).describe('Why it needs doing now.'),
  payload_json: z
    .string()
    .max(ASK_LIMITS.payload_json)
    .refine(isJsonObjectText, 'payload_json must be a JSON object as text, e.g. "{"env":"prod"}"')
    .default('{}')
    .describe(
      'The exact plan as a JSON object in a string, e.g. "{"env":"prod"}"; its digest is what gets approved.',
    ),
});

export type ReportProgressArgs = z.infer<typeof reportProgressSchema>;
export type AskApprovalArgs = z.infer<typeof askApprovalSchema>;

export const REPORT_PROGRESS_DESCRIPTION =
  "Tell the task's owner what matters: blocks, failures, results. Routine progress is merged; the owner's channels come from the gateway's config.";
export const ASK_APPROVAL_DESCRIPTION =
  "Ask a person to approve an action and wait for the answer: approved (with a capability), rejected (with the approver's comment, when they gave one) or timeout.";
