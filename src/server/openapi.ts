import { z } from 'zod';
import { askSchema, decisionSchema } from '../approvals/routes.js';
import { replayBodySchema } from '../delivery/engine/routes.js';
import { effectsQuerySchema } from '../effects/routes.js';
import { freezeBodySchema, revokeBodySchema } from '../gate/service/incident-routes.js';
import { evaluateBodySchema, shadowBodySchema, verifyBodySchema } from '../gate/service/routes.js';
import { replayBody as ingressReplayBody } from '../ingress/pipeline/replay.js';
import { costsQuerySchema } from '../costs/routes.js';
import { takeoverQuerySchema } from '../takeover/module.js';
import { deadOutboxQuerySchema, outboxReplayBodySchema } from './outbox-routes.js';
import { reportProgressSchema } from '../notify/schema.js';
import { putAwaySchema } from '../signals/routes.js';
import { cancelBodySchema, resumeBodySchema, taskListQuerySchema } from '../tasks/routes.js';

/**
 * `GET /v1/openapi.json` (issue 21, point 21): the OpenAPI 3.1 document of the routes the app really
 * mounted (`app.routes`), with the request schemas taken from the very zod objects those routes
 * validate with (`readJson(c, schema)`, `readQuery(c, schema)`), turned into JSON Schema by
 * `z.toJSONSchema`. Nothing is written by hand but a summary per route; a route added without an entry
 * here is still listed (its body undescribed), and openapi.test.ts fails until it gets one.
 */

export interface RouteDoc {
  summary: string;
  /** Who may call it: the roles of its key, `anyone`, or the credential it needs instead. */
  who: string;
  body?: z.ZodType;
  query?: z.ZodType;
}

/** `METHOD /path` as Hono registers it (`:param`). */
export const ROUTE_DOCS: Readonly<Record<string, RouteDoc>> = {
  'GET /healthz': { summary: 'liveness', who: 'anyone' },
  'GET /readyz': { summary: 'readiness: store reachable, policy loaded', who: 'anyone' },
  'GET /metrics': { summary: 'Prometheus text', who: 'anyone on loopback, else admin' },
  'GET /v1/openapi.json': { summary: 'this document', who: 'anyone' },
  'GET /v1/events': { summary: 'envelopes, filtered by correlation_id, task_id, type, after', who: 'admin' },
  'GET /v1/cluster': {
    summary: 'the replicas on this store, their last heartbeat, the leader and its fencing token',
    who: 'admin',
  },
  'POST /v1/gate/evaluate': {
    summary: 'a tool intent in, the decision contract out',
    who: 'agent, admin',
    body: evaluateBodySchema,
  },
  'POST /v1/capabilities/verify': {
    summary: 'check a capability token',
    who: 'agent, approver, admin',
    body: verifyBodySchema,
  },
  'GET /v1/policy': { summary: 'the serving policy revision', who: 'admin' },
  'POST /v1/policy/shadow': {
    summary: 're-decide recorded intents under a draft policy',
    who: 'admin',
    body: shadowBodySchema,
  },
  'GET /v1/incidents': { summary: 'current freezes and recent revocations', who: 'admin' },
  'POST /v1/incidents/revoke': { summary: 'revoke capabilities', who: 'admin', body: revokeBodySchema },
  'POST /v1/incidents/freeze': {
    summary: 'freeze an agent or tenant to read-only',
    who: 'admin',
    body: freezeBodySchema,
  },
  'POST /v1/incidents/unfreeze': { summary: 'lift a freeze', who: 'admin', body: freezeBodySchema },
  'GET /v1/runtimes': {
    summary: 'the runtime adapters and their capability matrix',
    who: 'agent, approver, admin',
  },
  'POST /v1/runtimes/:runtime/hooks': {
    summary: "a runtime's native hook JSON in, its native reply out",
    who: 'agent',
  },
  'POST /v1/progress': { summary: 'report_progress', who: 'agent', body: reportProgressSchema },
  'POST /v1/approvals': {
    summary: 'ask_approval; ?wait= holds until decided',
    who: 'agent',
    body: askSchema,
  },
  'GET /v1/approvals': { summary: 'list approvals', who: 'approver, admin' },
  'GET /v1/approvals/:id': {
    summary: "an approval's state; ?wait= long-polls",
    who: 'agent, approver, admin',
  },
  'POST /v1/approvals/:id/decision': {
    summary: 'approve or reject',
    who: 'approver, admin',
    body: decisionSchema,
  },
  'GET /v1/away': { summary: 'away mode', who: 'approver, admin' },
  'PUT /v1/away': { summary: 'switch away mode', who: 'approver, admin', body: putAwaySchema },
  'GET /v1/tasks': {
    summary: 'list tasks, newest first',
    who: 'admin; agent (own)',
    query: taskListQuerySchema,
  },
  'GET /v1/tasks/:id': { summary: 'a task and its state', who: 'admin; agent (own)' },
  'POST /v1/tasks/:id/cancel': {
    summary: 'stop a task (its process group); state canceled',
    who: 'admin; agent (own)',
    body: cancelBodySchema,
  },
  'POST /v1/tasks/:id/resume': {
    summary: "continue a headless task's session",
    who: 'approver, admin',
    body: resumeBodySchema,
  },
  'GET /v1/outbox/dead': {
    summary: 'outbox rows parked after the last relay attempt, with the failing subscriber and its version',
    who: 'admin',
    query: deadOutboxQuerySchema,
  },
  'POST /v1/outbox/replay': {
    summary: 'put dead outbox rows back for the relay',
    who: 'admin',
    body: outboxReplayBodySchema,
  },
  'GET /v1/takeover': {
    summary:
      'what waits for a person: pending approvals, stalled sessions, deliveries to reconcile, dead letters, failed tasks, dead outbox rows',
    who: 'approver, admin',
    query: takeoverQuerySchema,
  },
  'GET /v1/costs': {
    summary: 'the cost ledger summed by agent, task, session or day',
    who: 'admin',
    query: costsQuerySchema,
  },
  'GET /v1/deliveries': { summary: 'outbound deliveries and dead letters', who: 'admin' },
  'POST /v1/deliveries/replay': { summary: 'replay dead letters', who: 'admin', body: replayBodySchema },
  'GET /v1/deliveries/channels': {
    summary: "each channel's credential state: ok, or revoked at the provider (with why, since and the fix)",
    who: 'admin',
  },
  'POST /v1/deliveries/channels/:name/restore': {
    summary: "lift a channel's revoked mark (after fixing its credential)",
    who: 'admin',
  },
  'GET /v1/effects': {
    summary: 'side effects and their receipts (?status=unsettled: what waits for a person)',
    who: 'admin',
    query: effectsQuerySchema,
  },
  'GET /v1/effects/trace/:id': {
    summary: 'intent → decision → approval → effect → receipt for an event, task or effect id',
    who: 'admin',
  },
  'POST /v1/ingress/:source': {
    summary: 'an inbound webhook (202, 200 duplicate, 401, 404, 413, 415)',
    who: "the source's signature",
  },
  'GET /v1/ingress/dlq': { summary: 'inbound deliveries that failed', who: 'admin' },
  'POST /v1/ingress/deliveries/:id/replay': {
    summary: 're-run admission for a stored delivery',
    who: 'admin',
    body: ingressReplayBody,
  },
  'POST /v1/callbacks/slack/:channel': {
    summary: 'Slack interactivity (button taps)',
    who: "Slack's signature",
  },
  'POST /v1/callbacks/slack/:channel/events': { summary: 'Slack events (replies)', who: "Slack's signature" },
  'POST /v1/callbacks/telegram/:channel': { summary: 'Telegram updates', who: "the channel's secret token" },
  'POST /v1/callbacks/feishu/:channel': { summary: 'Feishu card actions', who: "Feishu's signature" },
  'GET /v1/tools': { summary: 'the reach tool registry', who: 'agent, admin' },
  'POST /v1/touch': { summary: 'a TouchRequest in, a TouchResponse out', who: 'agent' },
  'GET /v1/touch/:id': { summary: 'the TouchResponse of an earlier touch', who: 'agent' },
  'GET /v1/agents': {
    summary: 'the agent registry: skills, liveness, load, success rate, latency',
    who: 'agent, admin',
  },
  'POST /v1/agents': {
    summary: 'an agent registers itself (card_url or card) with the key named for it',
    who: 'agent, admin',
  },
  'POST /v1/agents/:id/heartbeat': {
    summary: "an agent's heartbeat (load, status); only its own key",
    who: 'agent',
  },
  'POST /v1/collaborations': {
    summary: 'route a skill request to an agent; the receipt once it ended',
    who: 'agent, admin',
  },
  'GET /v1/collaborations/:ref_id': { summary: "a collaboration's receipt", who: 'agent, admin' },
  'GET /mcp': { summary: 'MCP Streamable HTTP (405: the server never speaks unasked)', who: 'agent' },
  'POST /mcp': { summary: 'MCP Streamable HTTP (JSON-RPC)', who: 'agent' },
  'DELETE /mcp': { summary: 'end an MCP session', who: 'agent' },
  'GET /.well-known/agent-card.json': { summary: 'the A2A v1.0 agent card', who: 'anyone' },
  'GET /.well-known/jwks.json': { summary: "public keys that verify Switchboard's push JWTs", who: 'anyone' },
  'POST /a2a': { summary: 'A2A v1.0 JSON-RPC', who: 'agent' },
  'GET /a/:token': { summary: 'the approval page (HTML; changes nothing)', who: 'the signed link' },
  'POST /a/:token': { summary: 'decide from the approval page (form)', who: 'the signed link' },
  'GET /r/:token': { summary: 'the reply page (HTML)', who: 'the signed link' },
  'POST /r/:token': { summary: 'send a reply to a headless task (form)', who: 'the signed link' },
};

/** Console pages are HTML for people, behind a console session: one summary covers them. */
const CONSOLE: RouteDoc = {
  summary: 'web console (HTML, session cookie and CSRF token)',
  who: 'approver, admin',
};

export function routeDoc(method: string, path: string): RouteDoc | undefined {
  return (
    ROUTE_DOCS[`${method} ${path}`] ??
    (path === '/console' || path.startsWith('/console/') ? CONSOLE : undefined)
  );
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Hono's `/v1/tasks/:id` (or `:id{[0-9]+}`) as OpenAPI's `/v1/tasks/{id}`. */
function templated(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const out = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: out, params };
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/** Query schemas are objects of scalars: each property is one parameter. */
function queryParameters(schema: z.ZodType): Record<string, unknown>[] {
  const s = jsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    in: 'query',
    required: (s.required ?? []).includes(name),
    schema: p,
  }));
}

const ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

function operation(method: string, honoPath: string, params: string[]): Record<string, unknown> {
  const doc = routeDoc(method, honoPath);
  const op: Record<string, unknown> = {
    operationId: `${method.toLowerCase()}${honoPath.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ? c.toUpperCase() : ''))}`,
    summary: doc?.summary ?? 'undocumented',
    description: `Who: ${doc?.who ?? 'see docs/'}`,
    parameters: [
      ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...(doc?.query ? queryParameters(doc.query) : []),
    ],
    responses: {
      '200': { description: 'success (JSON unless the summary says HTML)' },
      default: { description: 'an error', content: { 'application/json': { schema: ERROR } } },
    },
  };
  if (doc?.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(doc.body) } } };
  }
  return op;
}

/** The document for the routes `app.routes` lists (middleware, `ALL` and wildcard entries left out). */
export function openApiDocument(
  routes: readonly { method: string; path: string }[],
  version: string,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (!METHODS.has(r.method) || r.path.includes('*')) continue;
    const { path, params } = templated(r.path);
    paths[path] ??= {};
    const item = paths[path];
    const key = r.method.toLowerCase();
    if (!item[key]) item[key] = operation(r.method, r.path, params);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard',
      version,
      description:
        'The HTTP API of a Switchboard gateway. Errors are { "error": { "code", "message" } } (docs/errors.md).',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
