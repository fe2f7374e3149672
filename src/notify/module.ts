import type { Envelope } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { once } from '../log/inbox.js';
import { approvalsPort } from '../approvals/port.js';
import { clusterPort, leaderOnly } from '../cluster/port.js';
import { gatePort } from '../gate/port.js';
import { requireRole } from '../kernel/auth.js';
import { readJson } from '../kernel/body.js';
import { type Deps, defineModule, type Module } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import type { WorkerSpec } from '../kernel/worker.js';
import { tasksPort } from '../tasks/port.js';
import { type NotifyConfig, notifyConfigProblems, notifyConfigSchema, routesSchema } from './config.js';
import { outboundPort, reporterPort } from './port.js';
import { gateContent } from './content.js';
import { approvalDraft, stalledDraft, type Who } from './message.js';
import { reportContext } from './context.js';
import { approvalActions } from './links.js';
import { REMINDER_POLL_MS, remindExpiring } from './reminders.js';
import { compileRoutes } from './routes.js';
import { compileTemplates, templateEngine } from './templates.js';
import { reportProgressSchema } from './schema.js';
import { Notifier } from './service.js';
import { alertRecipientAttempt, refuseRecipients } from './recipients.js';
import { announceBreaker, BREAKER_SUBSCRIBER } from './breaker.js';
import { announceCredential, CREDENTIAL_SUBSCRIBER } from './credential.js';

/** How often the worker looks for progress digests whose merge window has closed. */
export const DIGEST_POLL_MS = 1000;

/** Subscriber names key the inbox: renaming one makes it see old events again. */
const APPROVAL_SUBSCRIBER = 'notify.approval-requested';
const STALLED_SUBSCRIBER = 'notify.task-stalled';
const FALLBACK_SUBSCRIBER = 'notify.delivery-fallback';
const RESUMED_SUBSCRIBER = 'notify.task-resumed';

const requires = {
  deliveries: optional(outboundPort),
  tasks: optional(tasksPort),
  approvals: optional(approvalsPort),
  gate: optional(gatePort),
  /** Digests and reminders are singletons: they run on the cluster's leader (docs/scale.md). */
  cluster: optional(clusterPort),
};
const sections = { notify: notifyConfigSchema.prefault({}), routes: routesSchema.default([]) };
/**
 * The core, `notify`/`routes`, where messages go (the delivery module implements `outboundPort`), tasks
 * and approvals when running. Notify also reads the `channels:` the delivery module owns: which channel
 * names and types exist (a route names them; a template may be per type).
 */
export type NotifyDeps = Deps<typeof requires, typeof sections> & {
  config: { channels: Readonly<Record<string, { type: string }>> };
};

export interface NotifyModule extends Module<typeof requires, typeof sections> {
  /** The running notifier (after `start`), for the MCP server and tests. */
  notifier(): Notifier | undefined;
  /** Flushes due digests now (tests move the clock instead of waiting). */
  flushDue(): Promise<number>;
  /** Re-announces pending approvals about to expire, now; returns how many were sent. */
  remindDue(): Promise<number>;
}

export function notifyModule(): NotifyModule {
  let notifier: Notifier | undefined;
  let cfg: NotifyConfig | undefined;
  let svc: NotifyDeps | undefined;

  const running = (): Notifier => {
    if (!notifier) throw new AppError('not_ready', 'the notify module is not running');
    return notifier;
  };

  return {
    ...defineModule({
      name: 'notify',
      config: sections,
      checkConfig: (c) => notifyConfigProblems(c as Parameters<typeof notifyConfigProblems>[0]),
      requires,
      provides: [reporterPort],
      migrations: new URL('./migrations/', import.meta.url),
    }),
    notifier: () => notifier,
    flushDue: () => running().flushDue(),
    remindDue: () => {
      if (!svc || !cfg) throw new AppError('not_ready', 'the notify module is not running');
      return remindExpiring(svc, running(), cfg);
    },

    routes(app, services) {
      app.post('/v1/progress', requireRole(services.keys, 'agent'), async (c) => {
        const body = await readJson(c, reportProgressSchema, services.config.server.body_limit_bytes).catch(
          async (err: unknown) => {
            await refuseRecipients(err, (keys) =>
              alertRecipientAttempt(running(), services, keys, reportContext(c)),
            );
            throw err;
          },
        );
        const result = await running().report(body, reportContext(c));
        return c.json(result);
      });
    },

    start(deps) {
      const services = deps as NotifyDeps;
      cfg = services.config.notify;
      const compiled = compileRoutes(services.config.routes);
      if (!compiled.ok) throw new Error(compiled.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
      const engine = templateEngine();
      const templates = compileTemplates(engine, cfg.templates);
      if (!templates.ok) throw new Error(templates.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
      notifier = new Notifier(
        services,
        cfg,
        compiled.routes,
        new Set(Object.keys(services.config.channels)),
        templates.templates,
        engine,
      );
      const n = notifier;
      services.provide(reporterPort, {
        report: (input, ctx) => n.report(input, ctx),
        recipientsRefused: (tool, keys, ctx) => alertRecipientAttempt(n, services, keys, ctx, tool),
      });
      svc = services;
    },

    subscribers(deps) {
      const services = deps as NotifyDeps;
      const n = running();
      const locale = cfg!.locale;
      return [
        {
          name: APPROVAL_SUBSCRIBER,
          ownsInbox: true,
          accepts: (t) => t === 'agent.approval.requested',
          handle: (event) => announceApproval(services, n, event, locale),
        },
        {
          name: BREAKER_SUBSCRIBER,
          ownsInbox: true,
          accepts: (t) => t === 'agent.breaker.tripped',
          handle: (event) => announceBreaker(services, n, event, locale),
        },
        {
          name: CREDENTIAL_SUBSCRIBER,
          ownsInbox: true,
          accepts: (t) => t === 'integration.credential.revoked',
          handle: (event) => announceCredential(services, n, event, locale),
        },
        {
          name: STALLED_SUBSCRIBER,
          ownsInbox: true,
          accepts: (t) => t === 'agent.task.stalled',
          handle: (event) => announceStalled(services, n, event, locale),
        },
        {
          name: FALLBACK_SUBSCRIBER,
          accepts: (t) =>
            t === 'integration.delivery.failed' ||
            t === 'integration.delivery.dead' ||
            t === 'integration.delivery.blocked',
          handle: (event) => n.onDeliveryFailure(event),
        },
        {
          name: RESUMED_SUBSCRIBER,
          accepts: (t) => t === 'agent.task.resumed',
          handle: (event) => n.onResumed(event),
        },
      ];
    },

    // One pass at a time each: a slow store must not stack passes that race for the same claims.
    workers(deps) {
      const services = deps as NotifyDeps;
      const n = running();
      const c = cfg!;
      const leader = () => services.cluster;
      const specs: WorkerSpec[] = [
        {
          name: 'notify.digests',
          intervalMs: DIGEST_POLL_MS,
          tick: async () => {
            await n.flushDue();
          },
          onError: (err) => services.logger.error({ err }, 'notify: digest flush failed'),
        },
        {
          name: 'notify.reminders',
          intervalMs: REMINDER_POLL_MS,
          tick: async () => {
            await remindExpiring(services, n, c);
          },
          onError: (err) => services.logger.error({ err }, 'notify: approval reminders failed'),
        },
      ];
      return specs.map((w) => leaderOnly(leader, w));
    },

    async stop() {
      svc = undefined;
      notifier = undefined;
    },
  };
}

async function who(services: NotifyDeps, event: Envelope): Promise<Who & { owner: string }> {
  const taskId = event.execution.task_id;
  const task = taskId ? await services.tasks?.get(taskId) : undefined;
  return {
    task_id: taskId,
    agent: event.actor.agent_id ?? '',
    owner: task?.owner ?? '',
    ...(task?.title ? { task_title: task.title } : {}),
  };
}

/** `agent.approval.requested` → an approval message on the priority lane, with buttons where possible. */
async function announceApproval(
  services: NotifyDeps,
  n: Notifier,
  event: Envelope,
  locale: 'en' | 'zh',
): Promise<void> {
  const s = event.redacted_summary;
  const id = typeof s.approval_id === 'string' ? s.approval_id : undefined;
  if (!id) return;
  const actions = await approvalActions(services, id);
  const w = await who(services, event);
  // The agent wrote `action` and `reason`: they pass the content gate like any report, always masking
  // secrets rather than blocking, because an approval nobody hears of is worse than a masked one.
  const gated = gateContent(
    { summary: String(s.action ?? ''), detail: String(s.reason ?? '') },
    { ...n.cfg, secrets: 'mask' },
  );
  const content = gated.kind === 'ok' ? gated.content : gated.masked;
  const draft = approvalDraft(
    {
      action: content.summary,
      reason: content.detail ?? '',
      expires_at: String(s.expires_at ?? ''),
    },
    w,
    locale,
    actions,
  );
  await once(
    services.db,
    APPROVAL_SUBSCRIBER,
    event.event_id,
    (tx) => n.dispatch(tx, draft, event, 'high', w.owner),
    services.now(),
  );
}

async function announceStalled(
  services: NotifyDeps,
  n: Notifier,
  event: Envelope,
  locale: 'en' | 'zh',
): Promise<void> {
  const quiet = Number(event.redacted_summary.quiet_seconds);
  const minutes = Number.isFinite(quiet) ? Math.round(quiet / 60) : undefined;
  const w = await who(services, event);
  await once(
    services.db,
    STALLED_SUBSCRIBER,
    event.event_id,
    (tx) => n.dispatch(tx, stalledDraft(minutes, w, locale), event, 'high', w.owner),
    services.now(),
  );
}
