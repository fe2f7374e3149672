import { replyKeyOf } from '../replies/key.js';
import { replyUrl, signReply } from '../replies/token.js';
import type { NotifyDeps } from './module.js';

/** What a "Reply" link resumes: a task's session, until a moment (epoch ms). */
export interface ReplyTarget {
  task_id: string;
  session_id: string;
  expires_at: number;
}

/** The signed reply page for `target`, sent to `channel` (the channel is signed in, for the audit). */
export function replyLink(services: NotifyDeps, target: ReplyTarget, channel: string): string {
  const base = services.config.server.public_url ?? '';
  return replyUrl(base, signReply(replyKeyOf(services), { ...target, channel }));
}
