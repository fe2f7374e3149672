import type { ApprovalActions, Locale, Message, Severity, Stage } from './port.js';
import { applyAliases, type ContentInput } from './content.js';
import type { Digest, Flood } from './governance.js';
import { prefix as cut } from '../text/index.js';

/** Pure builders of the structured `Message` every channel renders. Recipients are never part of it. */

export interface Who {
  task_id: string | null;
  task_title?: string;
  agent: string;
}

/** Who the message is about; every channel puts the stage label in front (`headline()`), once. */
function title(who: Who): string {
  return who.task_title ?? who.task_id ?? who.agent;
}

function base(who: Who, locale: Locale): Pick<Message, 'agent' | 'locale' | 'task'> {
  const m: Pick<Message, 'agent' | 'locale' | 'task'> = { agent: who.agent, locale };
  if (who.task_id) m.task = { id: who.task_id, ...(who.task_title ? { name: who.task_title } : {}) };
  return m;
}

export type Draft = Omit<Message, 'eventId'>;

export function progressDraft(
  report: { stage: Stage; severity: Severity },
  content: ContentInput,
  who: Who,
  opts: { locale: Locale; mention: boolean },
): Draft {
  const m: Draft = {
    kind: 'progress',
    stage: report.stage,
    severity: report.severity,
    title: title(who),
    summary: content.summary,
    ...base(who, opts.locale),
  };
  if (content.detail !== undefined) m.detail = content.detail;
  if (content.artifact !== undefined) m.artifact = content.artifact;
  if (opts.mention) m.mention = true;
  return m;
}

/** A burst of progress reports as one message: the latest summary, and how many it stands for. */
export function digestDraft(digest: Digest, who: Who, locale: Locale): Draft {
  const folded =
    digest.count > 1
      ? locale === 'zh'
        ? `合并了 ${digest.count} 条进展报告`
        : `${digest.count} progress reports folded into this one`
      : undefined;
  const detail = [digest.detail, folded].filter((s): s is string => s !== undefined).join('\n');
  const m: Draft = {
    kind: 'progress',
    stage: 'progress',
    severity: digest.severity,
    title: title(who),
    summary: digest.summary,
    ...base(who, locale),
  };
  if (detail) m.detail = detail;
  return m;
}

/**
 * A flood's digest: "failed 14× in 10 min · <the text>", on the priority lane like the first of them.
 * The count includes the first message, which was sent on its own.
 */
export function floodDraft(flood: Flood, who: Who, locale: Locale): Draft {
  const times = flood.count + 1;
  const minutes = Math.max(1, Math.round((flood.due_at - flood.opened_at) / 60_000));
  const head =
    locale === 'zh'
      ? `${minutes} 分钟内 ${flood.stage} ${times} 次 · `
      : `${flood.stage} ${times}× in ${minutes} min · `;
  return {
    kind: 'progress',
    stage: flood.stage,
    severity: flood.severity,
    title: title(who),
    summary: cut(`${head}${flood.summary}`, 120),
    detail:
      locale === 'zh'
        ? `同样的报告重复了 ${times} 次；第一次已单独发送。`
        : `The same report came ${times} times; the first was sent on its own, the repeats are folded into this one.`,
    ...base(who, locale),
  };
}

export function approvalDraft(
  a: { action: string; reason: string; expires_at: string },
  who: Who,
  locale: Locale,
  actions: ApprovalActions | undefined,
): Draft {
  const m: Draft = {
    kind: 'approval',
    stage: 'awaiting_approval',
    severity: 'warn',
    title: title(who),
    summary: cut(a.action, 120),
    detail: `${a.reason}\n${locale === 'zh' ? '到期' : 'expires'}: ${a.expires_at}`,
    ...base(who, locale),
  };
  if (actions) m.actions = actions;
  return m;
}

/** The one reminder of a pending approval: the same message, its summary saying how long is left. */
export function reminderDraft(
  a: { action: string; reason: string; expires_at: string },
  minutesLeft: number,
  who: Who,
  locale: Locale,
  actions: ApprovalActions | undefined,
): Draft {
  const m = approvalDraft(a, who, locale, actions);
  const prefix =
    locale === 'zh' ? `提醒：${minutesLeft} 分钟后过期 · ` : `Reminder: expires in ${minutesLeft} min · `;
  m.summary = cut(`${prefix}${a.action}`, 120);
  return m;
}

export function stalledDraft(minutesIdle: number | undefined, who: Who, locale: Locale): Draft {
  const summary =
    locale === 'zh'
      ? `任务${minutesIdle !== undefined ? ` ${minutesIdle} 分钟` : ''}没有动静`
      : `No activity${minutesIdle !== undefined ? ` for ${minutesIdle} minutes` : ''}; the task may be stuck`;
  return {
    kind: 'alert',
    stage: 'blocked',
    severity: 'warn',
    title: title(who),
    summary,
    ...base(who, locale),
  };
}

/** What an external channel sees: internal names replaced by aliases in every text field. */
export function redactForExternal(msg: Message, aliases: Readonly<Record<string, string>>): Message {
  const out: Message = {
    ...msg,
    title: applyAliases(msg.title, aliases),
    summary: applyAliases(msg.summary, aliases),
  };
  if (msg.detail !== undefined) out.detail = applyAliases(msg.detail, aliases);
  if (msg.task?.name !== undefined) out.task = { ...msg.task, name: applyAliases(msg.task.name, aliases) };
  if (msg.agent !== undefined) out.agent = applyAliases(msg.agent, aliases);
  // A link cannot be aliased without breaking it: one that names something internal is left out.
  if (msg.artifact !== undefined && applyAliases(msg.artifact, aliases) !== msg.artifact) delete out.artifact;
  return out;
}
