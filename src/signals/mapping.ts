import type { Severity, Stage } from '../notify/port.js';
import type { SignalKind } from './config.js';

type Json = Record<string, unknown>;

/** What one runtime signal means to a person: the seed's stage, and whether someone must act. */
export interface Signal {
  kind: SignalKind;
  stage: Stage;
  severity: Severity;
  /** One line, before context; the content gate and the 120-char cap still apply. */
  headline: string;
  /** The runtime's own words (a notification message, the last assistant message, an error). */
  text?: string;
  /** Waiting for a person: sent only while the owner is away. */
  needsPerson: boolean;
}

/** Envelope types the subscriber reads; everything else (each tool call, above all) is not news. */
export const SIGNAL_TYPES: ReadonlySet<string> = new Set([
  'agent.notification.raised',
  'agent.turn.completed',
  'agent.turn.failed',
  'agent.session.ended',
  'agent.subagent.stopped',
  'agent.permission.requested',
]);

/** Types that show an agent or a person is busy: they end a folded idle streak and time the waiting. */
export const ACTIVITY_TYPES: ReadonlySet<string> = new Set([
  'agent.prompt.submitted',
  'agent.tool.requested',
  'agent.tool.completed',
  'agent.tool.failed',
  'agent.session.started',
]);

function s(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim().length > 0 ? v.trim() : undefined;
}

function rec(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

const WAITING: Pick<Signal, 'stage' | 'severity' | 'needsPerson'> = {
  stage: 'awaiting_approval',
  severity: 'warn',
  needsPerson: true,
};

/**
 * A notification names what it is about in `notification_type` (Claude Code: `permission_prompt`,
 * `idle_prompt`, `elicitation_dialog`, `auth_success`; Gemini CLI: `ToolPermission`).
 */
function notification(raw: Json): Signal {
  const type = s(raw.notification_type) ?? '';
  const text = s(raw.message);
  const base = text ? { text } : {};
  if (type === 'permission_prompt' || type === 'ToolPermission') {
    return { kind: 'permission_prompt', ...WAITING, headline: 'Needs your permission', ...base };
  }
  if (type === 'elicitation_dialog') {
    return { kind: 'elicitation', ...WAITING, headline: 'Asks you a question', ...base };
  }
  if (type === 'idle_prompt') {
    return {
      kind: 'idle_prompt',
      stage: 'blocked',
      severity: 'info',
      needsPerson: true,
      headline: 'Waiting for your input',
      ...base,
    };
  }
  return {
    kind: 'other_notification',
    stage: 'progress',
    severity: 'info',
    needsPerson: false,
    headline: s(raw.title) ?? 'Notification',
    ...base,
  };
}

/** The last assistant message where the runtime gives it (Claude Code, Codex, Gemini CLI). */
function lastMessage(raw: Json): string | undefined {
  return s(raw.last_assistant_message) ?? s(raw['last-assistant-message']) ?? s(raw.prompt_response);
}

/**
 * Maps one envelope (its type, the adapter's event name, the raw payload from the vault) to a signal,
 * or undefined when it is not one. Pure.
 */
export function toSignal(type: string, event: string, raw: Json): Signal | undefined {
  switch (type) {
    case 'agent.notification.raised':
      // Claude Code's MCP `Elicitation` hook and its result are the same prompt seen twice.
      if (event === 'Elicitation') {
        return { kind: 'elicitation', ...WAITING, headline: 'An MCP server asks you a question' };
      }
      if (event !== 'Notification') return undefined;
      return notification(raw);
    case 'agent.turn.completed': {
      // OpenClaw reports a failed run as the end of the agent with `success: false`.
      if (rec(raw.event)?.success === false) {
        return turnFailed(s(rec(raw.event)?.error));
      }
      const text = lastMessage(raw);
      return {
        kind: 'turn_done',
        stage: 'done',
        severity: 'info',
        needsPerson: false,
        headline: 'Turn finished',
        ...(text ? { text } : {}),
      };
    }
    case 'agent.turn.failed': {
      const why = [s(raw.error), s(raw.error_details)].filter(Boolean).join(': ');
      return turnFailed(why || (event === 'Interrupt' ? 'interrupted' : undefined));
    }
    case 'agent.subagent.stopped': {
      const text = lastMessage(raw);
      const who = s(raw.agent_type);
      return {
        kind: 'subagent_done',
        stage: 'progress',
        severity: 'info',
        needsPerson: false,
        headline: who ? `Subagent ${who} finished` : 'Subagent finished',
        ...(text ? { text } : {}),
      };
    }
    case 'agent.session.ended': {
      const reason = s(raw.reason);
      return {
        kind: 'session_ended',
        stage: 'done',
        severity: 'info',
        needsPerson: false,
        headline: 'Session ended',
        ...(reason ? { text: `reason: ${reason}` } : {}),
      };
    }
    case 'agent.permission.requested': {
      const tool = s(raw.tool_name) ?? s(rec(raw.extra)?.command);
      return {
        kind: 'permission_request',
        ...WAITING,
        headline: 'Asks for permission',
        ...(tool ? { text: tool } : {}),
      };
    }
    default:
      return undefined;
  }
}

function turnFailed(why: string | undefined): Signal {
  return {
    kind: 'turn_failed',
    stage: 'failed',
    severity: 'warn',
    needsPerson: false,
    headline: 'Turn failed',
    ...(why ? { text: why } : {}),
  };
}
