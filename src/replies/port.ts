import { port } from '../kernel/port.js';
import type { Replies } from './service.js';

/** Replies to headless sessions (src/replies/module.ts provides it; chat callbacks resume through it). */
export type ReplyService = Pick<Replies, 'target' | 'resume'>;

export const repliesPort = port<ReplyService>('replies');
