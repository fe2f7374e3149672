import { z } from 'zod';
import { parseId, readJsonText } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readJson } from '../kernel/body.js';
import type { App, Services } from '../kernel/module.js';
import type { ApprovalRecord } from './view.js';
import { ASK_LIMITS } from './port.js';
import { COMMENT_MAX_CHARS } from './page.js';
import type { Approvals } from './service.js';
import { prefix } from '../text/index.js';

/** `ask_approval` of CONTRACT.md, plus what the plan needs; unknown fields are a 400. */
export const askSchema = z.strictObject({
  action: z.string().min(1).max(ASK_LIMITS.action),
  reason: z.string().min(1).max(ASK_LIMITS.reason),
  payload_json: z.string().max(ASK_LIMITS.payload_json).default('{}'),
  tool: z.string().min(1).max(200).optional(),
  resource: z.string().min(1).max(2000).optional(),
  task_id: z.string().min(1).max(100).optional(),
});

export const decisionSchema = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  comment: z.string().max(COMMENT_MAX_CHARS).optional(),
});

const STATES = ['pending', 'approved', 'rejected', 'expired'] as const;
/** A page of `GET /v1/approvals`; the list is for people, who read the newest first. */
const LIST_DEFAULT = 100;
const LIST_MAX = 500;

/** The tool name of a plan asked for with `ask_approval` and no tool: the agent asks about an action. */
export const ASK_TOOL = 'ask_approval';

/** The HTTP shape: `status` is the state (CONTRACT.md), everything else as the record has it. */
export function present(r: ApprovalRecord): Record<string, unknown> {
  const { id, state, ...rest } = r;
  return { id, status: state, ...rest };
}

function parsePayload(text: string): Record<string, unknown> {
  const read = readJsonText(text);
  if (!read.ok && read.code === 'invalid_json') {
    throw new AppError('validation_failed', `payload_json: ${read.message}`, [
      { path: 'payload_json', code: 'invalid_json', message: 'not valid JSON' },
    ]);
  }
  // Nesting past 64 or a lone surrogate: the plan could never be hashed; the door's own codes.
  if (!read.ok) throw new AppError(read.code, `payload_json is refused: ${read.message}`);
  const value = read.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('validation_failed', 'payload_json: must be a JSON object, e.g. "{}"', [
      { path: 'payload_json', code: 'invalid_type', message: 'must be a JSON object' },
    ]);
  }
  return value as Record<string, unknown>;
}

function wholeNumber(raw: string | undefined, name: string, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) > max) {
    throw new AppError('bad_request', `\`${name}\` is a whole number from 0 to ${max}`);
  }
  return Number(raw);
}

export function approvalRoutes(
  app: App,
  s: Services,
  impl: () => Approvals,
  maxWaitSeconds: () => number,
): void {
  app.post('/v1/approvals', requireRole(s.keys, 'agent', 'admin'), async (c) => {
    const wait = wholeNumber(c.req.query('wait'), 'wait', maxWaitSeconds());
    const body = await readJson(c, askSchema, s.config.server.body_limit_bytes);
    const principal = c.get('principal');
    if (body.task_id !== undefined && !parseId('task', body.task_id)) {
      throw new AppError('validation_failed', 'task_id: not a task id (tsk_…)', [
        { path: 'task_id', code: 'invalid_format', message: 'not a task id' },
      ]);
    }
    if (principal.task_id && body.task_id && body.task_id !== principal.task_id) {
      throw new AppError('forbidden', `this key is bound to task ${principal.task_id}`);
    }
    const input = parsePayload(body.payload_json);
    const approvals = impl();
    let record = await approvals.request({
      action: body.action,
      reason: body.reason,
      plan: {
        tool: body.tool ?? ASK_TOOL,
        input,
        action: body.action,
        ...(body.resource ? { resource: body.resource } : {}),
      },
      ...(body.task_id ? { task_id: body.task_id } : {}),
      requested_by: principal,
    });
    if (wait) record = (await approvals.wait(record.id, wait * 1000, c.req.raw.signal)) ?? record;
    return c.json(present(record), 201);
  });

  app.get('/v1/approvals', requireRole(s.keys, 'approver', 'admin'), async (c) => {
    const state = c.req.query('state');
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
      throw new AppError('bad_request', `\`state\` is one of ${STATES.join(', ')}`);
    }
    const limit = wholeNumber(c.req.query('limit'), 'limit', LIST_MAX) ?? LIST_DEFAULT;
    const records = await impl().list({
      ...(state ? { state: state as (typeof STATES)[number] } : {}),
      limit: Math.max(1, limit),
    });
    return c.json({ approvals: records.map(present) });
  });

  app.get('/v1/approvals/:id', requireRole(s.keys, 'agent', 'approver', 'admin'), async (c) => {
    const wait = wholeNumber(c.req.query('wait'), 'wait', maxWaitSeconds());
    const id = parseId('approval', c.req.param('id'));
    const principal = c.get('principal');
    let record = id ? await impl().get(id) : undefined;
    // An agent sees only what it asked for; someone else's approval is "not found", not "forbidden".
    if (!record || (principal.role === 'agent' && record.requested_by !== principal.name)) {
      throw new AppError('not_found', `no approval ${prefix(c.req.param('id'), 40)}`);
    }
    // A long poll: the MCP client and scripts ask again with `?wait=` until the approval is decided.
    if (wait && record.state === 'pending')
      record = (await impl().wait(record.id, wait * 1000, c.req.raw.signal)) ?? record;
    return c.json(present(record));
  });

  app.post('/v1/approvals/:id/decision', requireRole(s.keys, 'agent', 'approver', 'admin'), async (c) => {
    const principal = c.get('principal');
    if (principal.role === 'agent') throw new AppError('self_approval');
    const id = parseId('approval', c.req.param('id'));
    if (!id) throw new AppError('not_found', `no approval ${prefix(c.req.param('id'), 40)}`);
    const body = await readJson(c, decisionSchema, s.config.server.body_limit_bytes);
    const record = await impl().decide(id, body.decision, principal, body.comment);
    return c.json(present(record));
  });
}
