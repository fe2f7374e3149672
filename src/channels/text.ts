import type { Locale, Message, Severity, Stage } from '../notify/port.js';
import { ELLIPSIS, type LengthUnit, measure, stripMassMentions, truncate } from '../text/index.js';

/** Shared, pure text helpers every template uses: labels, sanitizing, fitting a cap, plain text. */

const LABELS = {
  en: {
    stage: {
      started: 'Started',
      progress: 'Progress',
      blocked: 'Blocked',
      awaiting_approval: 'Awaiting approval',
      done: 'Done',
      failed: 'Failed',
    },
    severity: { info: 'info', warn: 'warning', critical: 'critical' },
    approve: 'Approve',
    reject: 'Reject',
    open: 'Open approval page',
    reply: 'Reply',
    task: 'Task',
    agent: 'Agent',
    artifact: 'Result',
  },
  zh: {
    stage: {
      started: '已开始',
      progress: '进展',
      blocked: '受阻',
      awaiting_approval: '等待审批',
      done: '完成',
      failed: '失败',
    },
    severity: { info: '信息', warn: '警告', critical: '严重' },
    approve: '批准',
    reject: '拒绝',
    open: '打开审批页面',
    reply: '回复',
    task: '任务',
    agent: '智能体',
    artifact: '结果',
  },
} as const satisfies Record<Locale, Labels>;

export interface Labels {
  stage: Record<Stage, string>;
  severity: Record<Severity, string>;
  approve: string;
  reject: string;
  open: string;
  /** The link to the reply page of a resumable headless task. */
  reply: string;
  task: string;
  agent: string;
  artifact: string;
}

export function labels(locale: Locale | undefined): Labels {
  return LABELS[locale ?? 'en'];
}

/**
 * Joins head, detail and tail, cutting only the detail, so the summary and the approval links
 * survive a long detail (channel.case.ts checks it for every channel).
 */
export function fitText(
  head: string,
  detail: string | undefined,
  tail: string,
  max: number,
  unit: LengthUnit,
): string {
  const sep = '\n\n';
  const parts = (d: string) => [head, d, tail].filter((p) => p !== '').join(sep);
  const full = parts(detail ?? '');
  if (measure(full, unit) <= max) return full;
  const fixed = measure(parts(''), unit) + (detail ? measure(sep, unit) : 0);
  const room = max - fixed;
  if (room > measure(ELLIPSIS, unit) && detail) return parts(truncate(detail, room, unit));
  return truncate(parts(''), max, unit);
}

/** The message with mass mentions removed from every free-text field. */
export function sanitize(msg: Message): Message {
  const out: Message = {
    ...msg,
    title: stripMassMentions(msg.title),
    summary: stripMassMentions(msg.summary),
  };
  if (msg.detail !== undefined) out.detail = stripMassMentions(msg.detail);
  if (msg.agent !== undefined) out.agent = stripMassMentions(msg.agent);
  if (msg.task) {
    out.task = { id: msg.task.id };
    if (msg.task.name !== undefined) out.task.name = stripMassMentions(msg.task.name);
  }
  return out;
}

/** `Failed · Deploy web` — the one-line headline every channel uses. */
export function headline(msg: Message): string {
  return `${labels(msg.locale).stage[msg.stage]} · ${msg.title}`;
}

/** Task, agent and result lines, in the message's language. */
export function contextLines(msg: Message): string[] {
  const l = labels(msg.locale);
  const lines: string[] = [];
  if (msg.task) lines.push(`${l.task}: ${msg.task.name ? `${msg.task.name} (${msg.task.id})` : msg.task.id}`);
  if (msg.agent) lines.push(`${l.agent}: ${msg.agent}`);
  if (msg.artifact) lines.push(`${l.artifact}: ${msg.artifact}`);
  return lines;
}

/** Plain-text approval links for channels without buttons (GET shows the confirmation page). */
export function linkLines(msg: Message): string[] {
  if (!msg.actions) return [];
  const l = labels(msg.locale);
  return [`${l.open}: ${msg.actions.pageUrl}`];
}

/** The reply page as a plain-text line, for channels that cannot carry it as a button. */
export function replyLines(msg: Message): string[] {
  if (!msg.reply) return [];
  return [`${labels(msg.locale).reply}: ${msg.reply.url}`];
}

export interface PlainOptions {
  /** Leave the headline out when the channel shows it as a separate title. */
  headline?: boolean;
  /** Leave the page link out when buttons carry the approval. */
  links?: boolean;
  /** Leave the reply link out when a button carries it; default: as `links`. */
  reply?: boolean;
}

/** The message as plain text within a cap: headline, summary, detail, context, links. */
export function plainText(msg: Message, max: number, unit: LengthUnit, opts: PlainOptions = {}): string {
  const head = opts.headline === false ? msg.summary : `${headline(msg)}\n${msg.summary}`;
  const withReply = opts.reply ?? opts.links !== false;
  const tail = [
    ...contextLines(msg),
    ...(opts.links === false ? [] : linkLines(msg)),
    ...(withReply ? replyLines(msg) : []),
  ].join('\n');
  return fitText(head, msg.detail, tail, max, unit);
}

/** Severity → a provider-neutral rank: 1 (info) … 3 (critical). */
export function severityRank(severity: Severity): 1 | 2 | 3 {
  return severity === 'critical' ? 3 : severity === 'warn' ? 2 : 1;
}
