import { z } from 'zod';
import type { FormatContext, HttpRequest } from '../channel.js';
import type { Message, Severity } from '../../notify/port.js';
import { envName, httpUrl, JSON_HEADERS, requireSecret } from '../http.js';
import { headline, plainText, sanitize } from '../text.js';
import { truncate } from '../../text/index.js';

const labelName = z
  .string()
  .regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'Prometheus label names are [a-zA-Z_][a-zA-Z0-9_]*');

/** We send each alert once and never re-send it while firing, so it ends on its own after this. */
export const ALERT_TTL_SECONDS = 3600;

export const alertmanagerConfig = z.strictObject({
  type: z.literal('alertmanager'),
  /** Alertmanager's base URL; alerts go to `<url>/api/v2/alerts`. */
  url: httpUrl,
  /** Bearer token for an Alertmanager behind an authenticating proxy. */
  token_env: envName.optional(),
  alertname: z.string().min(1).optional(),
  /** Static labels for routing on the Alertmanager side (team, service…). */
  labels: z.record(labelName, z.string().min(1)).optional(),
  ttl_seconds: z.number().int().positive().optional(),
});
export type AlertmanagerConfig = z.infer<typeof alertmanagerConfig>;

/** The description annotation; pagers show about a screenful, and the page link must survive. */
export const ALERT_DESCRIPTION_MAX_BYTES = 4096;

// The conventional severity label values Alertmanager routes usually match on.
const SEVERITY: Record<Severity, string> = { info: 'info', warn: 'warning', critical: 'critical' };

export function formatAlertmanager(
  input: Message,
  config: AlertmanagerConfig,
  ctx: FormatContext,
): HttpRequest {
  const msg = sanitize(input);
  // Labels are the alert's identity: one alert per task, stage and alertname, deduplicated by Alertmanager.
  const labels: Record<string, string> = {
    ...config.labels,
    alertname: config.alertname ?? 'SwitchboardNotification',
    severity: SEVERITY[msg.severity],
    stage: msg.stage,
    kind: msg.kind,
  };
  if (msg.task) labels['task_id'] = msg.task.id;
  if (msg.agent) labels['agent'] = msg.agent;
  const annotations: Record<string, string> = {
    title: truncate(headline(msg), 256, 'chars'),
    summary: msg.summary,
    description: plainText(msg, ALERT_DESCRIPTION_MAX_BYTES, 'bytes', { headline: false }),
    event_id: msg.eventId,
  };
  if (msg.artifact) annotations['artifact'] = msg.artifact;
  if (msg.actions) annotations['approval_page'] = msg.actions.pageUrl;
  if (msg.reply) annotations['reply_page'] = msg.reply.url;
  const alert: Record<string, unknown> = {
    labels,
    annotations,
    startsAt: new Date(ctx.now).toISOString(),
    endsAt: new Date(ctx.now + (config.ttl_seconds ?? ALERT_TTL_SECONDS) * 1000).toISOString(),
  };
  const link = msg.actions?.pageUrl ?? msg.artifact;
  if (link) alert['generatorURL'] = link;
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (config.token_env) headers['authorization'] = `Bearer ${requireSecret(ctx, config.token_env)}`;
  return { url: `${config.url.replace(/\/+$/, '')}/api/v2/alerts`, headers, body: JSON.stringify([alert]) };
}
