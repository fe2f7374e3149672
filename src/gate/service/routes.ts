import { z } from 'zod';
import { parseId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import { requireRole } from '../../kernel/auth.js';
import { readJson } from '../../kernel/body.js';
import type { App } from '../../kernel/module.js';
import type { GateDeps } from '../module.js';
import type { GateIntent, IntentReader } from '../../gate/port.js';
import { GATE_RUNTIMES } from '../config.js';
import { TOOL_KINDS } from '../kinds.js';
import type { CapabilitySigner } from '../types.js';
import type { PolicyHolder } from './holder.js';
import type { IncidentStore } from './incidents-store.js';
import type { Gate } from './service.js';
import { SHADOW_MAX_LIMIT } from './shadow.js';

const jsonObject = z.record(z.string(), z.unknown());
const taskId = z.string().refine((v) => parseId('task', v) !== undefined, 'not a task id (tsk_…)');

/** `POST /v1/gate/evaluate`: one intent; unknown fields are a 400, not a silently ignored typo. */
export const evaluateBodySchema = z.strictObject({
  tool: z.string().min(1).max(200),
  input: jsonObject,
  action: z.string().min(1).max(500).optional(),
  resource: z.string().min(1).max(2000).optional(),
  task_id: taskId.optional(),
  session_id: z.string().min(1).max(200).optional(),
  runtime: z.enum(GATE_RUNTIMES).optional(),
  /** The canonical kind and args (docs/policy.md, "Kinds"); without them the intent is `other`. */
  kind: z.enum(TOOL_KINDS).optional(),
  args: jsonObject.optional(),
});

const planSchema = z.strictObject({
  tool: z.string().min(1).max(200),
  input: jsonObject,
  action: z.string().min(1).max(500).nullable().optional(),
  resource: z.string().min(1).max(2000).nullable().optional(),
});

export const verifyBodySchema = z.strictObject({
  token: z.string().min(1).max(16_384),
  plan: planSchema,
  expect: z
    .strictObject({ tenant: z.string().min(1).max(200).optional(), task: taskId.nullable().optional() })
    .optional(),
});

/** `POST /v1/policy/shadow`: a draft policy's text and the window of recorded intents to run it over. */
export const shadowBodySchema = z.strictObject({
  policy_yaml: z.string().min(1),
  since: z.string().min(1).max(40).optional(),
  limit: z.number().int().min(1).max(SHADOW_MAX_LIMIT).optional(),
});

export interface GateRouteDeps {
  gate: () => Gate;
  holder: PolicyHolder;
  incidents: () => IncidentStore;
  signer: () => CapabilitySigner | undefined;
  intents?: IntentReader;
}

export function gateRoutes(app: App, s: GateDeps, d: GateRouteDeps): void {
  app.post('/v1/gate/evaluate', requireRole(s.keys, 'agent', 'admin'), async (c) => {
    const body = await readJson(c, evaluateBodySchema, s.config.server.body_limit_bytes);
    const principal = c.get('principal');
    // A task-scoped key speaks for its task only; the body may repeat it, never name another.
    if (principal.task_id && body.task_id && body.task_id !== principal.task_id) {
      throw new AppError('forbidden', 'this key is bound to another task');
    }
    const task = principal.task_id ?? body.task_id;
    const intent: GateIntent = { tool: body.tool, input: body.input };
    if (body.action !== undefined) intent.action = body.action;
    if (body.resource !== undefined) intent.resource = body.resource;
    if (body.session_id !== undefined) intent.session_id = body.session_id;
    if (body.runtime !== undefined) intent.runtime = body.runtime;
    if (body.kind !== undefined) intent.kind = body.kind;
    if (body.args !== undefined) intent.args = body.args;
    // A runtime's own tool name, without a kind: classified the way its hooks are.
    const classified =
      body.kind === undefined && body.runtime
        ? d.intents?.classify(body.runtime, body.tool, body.input)
        : undefined;
    if (classified) {
      intent.kind = classified.kind;
      intent.args = classified.args;
    }
    if (task) {
      intent.task_id = task;
      // Every intent is a step, as every hook with an intent is: `task.steps` counts this call too.
      await s.tasks?.touch(task, {
        step: true,
        ...(body.session_id ? { session_id: body.session_id } : {}),
        ...(body.runtime ? { runtime: body.runtime } : {}),
      });
    }
    return c.json(await d.gate().evaluate(intent, { principal }));
  });

  app.post('/v1/capabilities/verify', requireRole(s.keys, 'admin', 'agent', 'approver'), async (c) => {
    const body = await readJson(c, verifyBodySchema, s.config.server.body_limit_bytes);
    const expect: { tenant?: string; task?: string | null } = {};
    if (body.expect?.tenant !== undefined) expect.tenant = body.expect.tenant;
    if (body.expect?.task !== undefined) expect.task = body.expect.task;
    const checked = await d.gate().verifyIssued({ token: body.token, plan: body.plan, expect });
    return c.json(
      checked.ok
        ? { valid: true, claims: checked.claims }
        : { valid: false, reason: checked.reason, ...(checked.detail ? { detail: checked.detail } : {}) },
    );
  });

  app.get('/v1/policy', requireRole(s.keys, 'admin'), (c) => c.json(d.holder.status()));

  // A POST although it writes nothing: the draft is a body, and may be larger than a URL carries.
  app.post('/v1/policy/shadow', requireRole(s.keys, 'admin'), async (c) => {
    const body = await readJson(c, shadowBodySchema, s.config.server.body_limit_bytes);
    return c.json(
      await d.gate().shadow({
        policyYaml: body.policy_yaml,
        ...(body.since !== undefined ? { since: body.since } : {}),
        ...(body.limit !== undefined ? { limit: body.limit } : {}),
      }),
    );
  });
}
