import { z } from 'zod';

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

export const askApprovalSchema = z.strictObject({
  action: z.string().min(1).describe('What you want to do, in one line.'),
  reason: z.string().min(1).describe('Why it needs doing now.'),
  payload_json: z
    .string()
    .default('{}')
    .describe('The exact plan as a JSON object; its digest is what gets approved.'),
});

export type ReportProgressArgs = z.infer<typeof reportProgressSchema>;
export type AskApprovalArgs = z.infer<typeof askApprovalSchema>;

export const REPORT_PROGRESS_DESCRIPTION =
  "Tell the task's owner what matters: blocks, failures, results. Routine progress is merged; the owner's channels come from the gateway's config.";
export const ASK_APPROVAL_DESCRIPTION =
  'Ask a person to approve an action and wait for the answer: approved (with a capability), rejected or timeout.';
