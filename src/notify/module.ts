import type { Envelope } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { once } from '../log/inbox.js';
import { mountMcp } from '../mcp/http.js';
import type { McpSessions } from '../mcp/sessions.js';
import { requireRole } from '../kernel/auth.js';
import { readJson } from '../kernel/body.js';
import type { Module, Services } from '../kernel/module.js';
import { startWorker, type Worker } from '../kernel/worker.js';
import { type NotifyConfig, notifyConfigSchema, routesSchema } from './config.js';
import { gateContent } from './content.js';
import { approvalDraft, stalledDraft, type Who } from './message.js';
import { reportContext } from './context.js';
import { approvalActions } from './links.js';
import { REMINDER_POLL_MS, remindExpiring } from './reminders.js';
import { compileRoutes } from './routes.js';
import { compileTemplates, templateEngine } from './templates.js';
import { reportProgressSchema } from './schema.js';
import { Notifier } from './service.js';

/** How often the worker looks for progress digests whose merge window has closed. */
export const DIGEST_POLL_MS = 1000;

/** Subscriber names key the inbox: renaming one makes it see old events again. */
const APPROVAL_SUBSCRIBER = 'notify.approval-requested';
const STALLED_SUBSCRIBER = 'notify.task-stalled';
const FALLBACK_SUBSCRIBER = 'notify.delivery-fallback';
const RESUMED_SUBSCRIBER = 'notify.task-resumed';

export interface NotifyModule extends Module {
  /** The running notifier (after `start`), for the MCP server and tests. */
  notifier(): Notifier | undefined;
  /** Flushes due digests now (tests move the clock instead of waiting). */
  flushDue(): Promise<number>;
  /** Re-announces pending approvals about to expire, now; returns how many were sent. */
  remindDue(): Promise<number>;
}

export interface NotifyModuleOptions {
  /** Also serve a bare `echo` tool at /mcp: the bench's baseline on the same server and transport. */
  echoTool?: boolean;
}

export function notifyModule(opts: NotifyModuleOptions = {}): NotifyModule {
  let notifier: Notifier | undefined;
  let cfg: NotifyConfig | undefined;
  let workers: Worker[] = [];
  let svc: Services | undefined;
  let sessions: McpSessions | undefined;

  const running = (): Notifier => {
    if (!notifier) throw new AppError('not_ready', 'the notify module is not running');
    return notifier;
  };

  return {
    name: 'notify',
    notifier: () => notifier,
    flushDue: () => running().flushDue(),
    remindDue: () => {
      if (!svc || !cfg) throw new AppError('not_ready', 'the notify module is not running');
      return remindExpiring(svc, running(), cfg);
    },

    routes(app, services) {
      app.post('/v1/progress', requireRole(services.keys, 'agent'), async (c) => {
        const body = await readJson(c, reportProgressSchema, services.config.server.body_limit_bytes);
        const result = await running().report(body, reportContext(c));
        return c.json(result);
      });
      sessions = mountMcp(
        app,
        services,
        { report: (input, ctx) => running().report(input, ctx) },
        { echo: opts.echoTool === true },
      );
    },

    start(services) {
      cfg = notifyConfigSchema.parse(services.config.notify ?? {});
      const compiled = compileRoutes(routesSchema.parse(services.config.routes ?? []));
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
      const locale = cfg.locale;
      services.relay.subscribe({
        name: APPROVAL_SUBSCRIBER,
        ownsInbox: true,
        accepts: (t) => t === 'agent.approval.requested',
        handle: (event) => announceApproval(services, n, event, locale),
      });
      services.relay.subscribe({
        name: STALLED_SUBSCRIBER,
        ownsInbox: true,
        accepts: (t) => t === 'agent.task.stalled',
        handle: (event) => announceStalled(services, n, event, locale),
      });
      services.relay.subscribe({
        name: FALLBACK_SUBSCRIBER,
        accepts: (t) =>
          t === 'integration.delivery.failed' ||
          t === 'integration.delivery.dead' ||
          t === 'integration.delivery.blocked',
        handle: (event) => n.onDeliveryFailure(event),
      });
      services.relay.subscribe({
        name: RESUMED_SUBSCRIBER,
        accepts: (t) => t === 'agent.task.resumed',
        handle: (event) => n.onResumed(event),
      });
      svc = services;
      const c = cfg;
      // One pass at a time each: a slow store must not stack passes that race for the same claims.
      workers = [
        startWorker({
          name: 'notify.digests',
          intervalMs: DIGEST_POLL_MS,
          tick: async () => {
            await n.flushDue();
          },
          onError: (err) => services.logger.error({ err }, 'notify: digest flush failed'),
        }),
        startWorker({
          name: 'notify.reminders',
          intervalMs: REMINDER_POLL_MS,
          tick: async () => {
            await remindExpiring(services, n, c);
          },
          onError: (err) => services.logger.error({ err }, 'notify: approval reminders failed'),
        }),
      ];
    },

    async stop() {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      svc = undefined;
      await sessions?.closeAll();
      notifier = undefined;
    },
  };
}

async function who(services: Services, event: Envelope): Promise<Who & { owner: string }> {
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
  services: Services,
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
  services: Services,
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
