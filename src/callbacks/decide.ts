import { AppError } from '../errors/index.js';
import type { Principal } from '../kernel/module.js';
import type { ApprovalService } from '../approvals/port.js';
import type { Decision } from './click.js';

/** How a click ended, as a person on a phone should read it. */
export type Outcome = 'approved' | 'rejected' | 'already_decided' | 'expired' | 'not_found' | 'not_allowed';

export const OUTCOME_TEXT: Readonly<Record<Outcome, string>> = {
  approved: 'approved',
  rejected: 'rejected',
  already_decided: 'already decided',
  expired: 'expired',
  not_found: 'no such approval',
  not_allowed: 'you may not decide this approval',
};

// The errors a click can meet that are answers, not failures: the chat shows them as text.
const ANSWERED: Partial<Record<string, Outcome>> = {
  already_decided: 'already_decided',
  expired: 'expired',
  not_found: 'not_found',
  forbidden: 'not_allowed',
  self_approval: 'not_allowed',
};

/**
 * One click, one attempt at a decision. `approvals.decide` writes with one conditional UPDATE, so a
 * second press (or Slack and Telegram both) finds the approval decided and changes nothing.
 */
export async function decideClick(
  approvals: ApprovalService,
  click: { approvalId: string; decision: Decision },
  by: Principal,
): Promise<Outcome> {
  try {
    const view = await approvals.decide(click.approvalId, click.decision, by);
    return view.state === 'rejected' ? 'rejected' : 'approved';
  } catch (err) {
    const outcome = err instanceof AppError ? ANSWERED[err.code] : undefined;
    if (outcome) return outcome;
    throw err;
  }
}

/** A channel's optional allow-list: absent means whoever the platform let see the message. */
export const allowed = (list: readonly (string | number)[] | undefined, userId: string): boolean =>
  list === undefined || list.some((id) => String(id) === userId);
