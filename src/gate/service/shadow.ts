import { parse } from 'yaml';
import type { Envelope } from '../../envelope/index.js';
import { readJsonText } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import type { EventLog } from '../../log/log.js';
import type { Vault } from '../../log/vault.js';
import type { CompiledPolicy } from '../compile.js';
import { evaluateWithTrace } from '../evaluate.js';
import { HistoryWindow, historyEntry, historyKey } from '../history.js';
import { isToolKind } from '../kinds.js';
import { formatProblem } from '../load.js';
import { preparePolicy } from '../policy.js';
import type { DecisionKind, IntentReader, ShadowChange, ShadowReport, ShadowRequest } from '../port.js';
import { DECISIONS } from '../port.js';
import type { HistoryEntry, Intent } from '../types.js';
import { actionText } from './record.js';

export const SHADOW_DEFAULT_LIMIT = 100_000;
export const SHADOW_MAX_LIMIT = 1_000_000;
const DEFAULT_WINDOW = '7d';
/** Events read per query: the log's own page cap. */
const PAGE = 1000;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Reason codes the gate gives itself: the decision was not a rule's. */
const GATE_REASONS = new Set([
  'NO_RULE_MATCHED',
  'POLICY_ERROR',
  'POLICY_UNAVAILABLE',
  'INPUT_TOO_LARGE',
  'INPUT_INVALID',
  'UNKNOWN_EVENT_TYPE',
  'FROZEN_READ_ONLY',
  'MODIFY_INVALID_INPUT',
  'MODIFY_SCHEMA_UNKNOWN',
]);

export interface ShadowDeps {
  log: EventLog;
  vault: Vault;
  intents: IntentReader | undefined;
  tenant: string;
  now: () => number;
  /** What a session had before the window (the gate's history tables): entries oldest first. */
  priorHistory?: (
    key: string,
    before: number,
  ) => Promise<{ entries: HistoryEntry[]; untrustedSince: number | null }>;
  /** The task's owner, start and whether it was launched with untrusted input (a webhook payload). */
  task?: (taskId: string) => Promise<ShadowTask | undefined>;
}

/** What a shadow run reads of a task once per run: with a decision's `task_steps`, CEL's `task`. */
export interface ShadowTask {
  owner: string | null;
  created_at: string;
  untrusted: boolean;
}

/** `7d`, `24h`, `30m` back from now, or an ISO 8601 time; the ISO text `occurred_at` is compared with. */
export function shadowSince(since: string | undefined, now: number): string {
  const text = (since ?? DEFAULT_WINDOW).trim();
  const relative = /^(\d{1,6})([mhd])$/.exec(text);
  if (relative) return new Date(now - Number(relative[1]) * UNIT_MS[relative[2]!]!).toISOString();
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new AppError(
      'validation_failed',
      `since: ${JSON.stringify(text.slice(0, 40))} is neither a duration (7d, 24h, 30m) nor an ISO 8601 time`,
    );
  }
  return new Date(at).toISOString();
}

/**
 * Compiles the draft the way a reload would, from its text alone: a draft that names `policy_files`
 * is refused (inline its rules; the CLI does), so a shadow run never reads the server's files.
 */
export function compileDraft(policyYaml: string): CompiledPolicy {
  let value: unknown;
  try {
    value = parse(policyYaml);
  } catch {
    value = undefined; // preparePolicy reports the syntax error with its line
  }
  const files = (value as { policy_files?: unknown } | null | undefined)?.policy_files;
  if (Array.isArray(files) && files.length > 0) {
    throw new AppError(
      'validation_failed',
      'the draft names policy_files; inline their rules under rules: (switchboard policy shadow does)',
    );
  }
  const prepared = preparePolicy([{ kind: 'config', name: 'draft', text: policyYaml }]);
  if (prepared.ok) return prepared.compiled;
  const lines = prepared.problems.map(formatProblem);
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more)` : '';
  throw new AppError('validation_failed', `the draft policy is broken: ${lines[0]}${more}`, lines);
}

/** A recorded intent read back, waiting for its recorded decision (which follows it in the log). */
interface Pending {
  event: Envelope;
  intent: Intent;
  /** What CEL sees as `envelope`: the event that carried the intent. */
  envelope: Envelope;
}

interface SessionHistory {
  window: HistoryWindow;
  untrusted: boolean;
}

/** The draft's decision, and the rule that made it (null for the gate's own reasons). */
function redecide(
  deps: ShadowDeps,
  draft: CompiledPolicy,
  p: Pending,
  h: SessionHistory | undefined,
  facts: { frozen: boolean; task: ShadowTask | undefined; steps: number },
): { decision: DecisionKind; rule: string | null } {
  const e = p.event;
  const at = Date.parse(e.occurred_at);
  const t = facts.task;
  const task = {
    id: e.execution.task_id,
    owner: t?.owner ?? null,
    steps: facts.steps,
    wall_time_seconds: t ? Math.max(0, Math.floor((at - Date.parse(t.created_at)) / 1000)) : 0,
  };
  const d = evaluateWithTrace(draft, p.intent, {
    now: new Date(at),
    tenant_id: deps.tenant,
    agent_id: e.actor.agent_id,
    task,
    // As the gate builds them (service.ts): the task's steps and wall time; other budget facts are not recorded.
    budgets: { steps: task.steps, wall_time_seconds: task.wall_time_seconds },
    envelope: p.envelope,
    frozen: facts.frozen,
    history: h?.window.entries ?? [],
    ...(h ? { window: h.window } : {}),
    session: {
      id: e.execution.session_id,
      untrusted: (h?.untrusted ?? false) || t?.untrusted === true,
      ...(h ? { kinds: h.window.kinds, hosts: h.window.hosts, files: h.window.files } : {}),
    },
  }).decision;
  const rule = GATE_REASONS.has(d.reason_code)
    ? null
    : (d.matched_rules.find((m) => m.decision === d.decision)?.id ?? null);
  return { decision: d.decision, rule };
}

/**
 * Re-decides the recorded intents of the window under `draft`, oldest first, each with the history
 * and session facts it had when it was decided: history is rebuilt from the log as the run goes (the
 * recorded decisions, not the draft's), seeded with what the session had before the window. Reads
 * only; no event, no approval, no capability.
 */
export async function runShadow(deps: ShadowDeps, draft: CompiledPolicy, req: ShadowRequest) {
  const since = shadowSince(req.since, deps.now());
  const limit = Math.min(req.limit ?? SHADOW_DEFAULT_LIMIT, SHADOW_MAX_LIMIT);
  const report: ShadowReport = { evaluated: 0, skipped: 0, changed: [], counts: {} };
  const afterSeq = await startSeq(deps.log, since, limit);
  if (afterSeq === undefined) return report;
  const permissions = await permissionEvents(deps.log, since, afterSeq);
  const histories = new Map<string, SessionHistory>();
  const pending = new Map<string, Pending>();
  const historyOf = async (key: string) => {
    let h = histories.get(key);
    if (!h) {
      const prior = await deps.priorHistory?.(key, Date.parse(since));
      const entries = prior?.entries ?? [];
      const untrusted = prior?.untrustedSince != null || entries.some((e) => e.untrusted);
      h = { window: new HistoryWindow(entries), untrusted };
      histories.set(key, h);
    }
    return h;
  };
  const tasks = new Map<string, ShadowTask | undefined>();
  const taskOf = async (id: string | null) => {
    if (!id || !deps.task) return undefined;
    if (!tasks.has(id)) tasks.set(id, await deps.task(id));
    return tasks.get(id);
  };

  let seq = afterSeq;
  let taken = 0;
  for (;;) {
    const page = await deps.log.list({ type: 'agent.tool.*', afterSeq: seq, limit: PAGE });
    if (page.length === 0) break;
    for (const { seq: s, envelope: e } of page) {
      seq = s;
      if (e.type === 'agent.tool.requested') {
        if (taken >= limit) continue;
        taken++;
        const read = await recordedIntent(deps, e, permissions.get(e.causation_id ?? ''));
        if (read) pending.set(e.event_id, { event: e, ...read });
        else report.skipped++;
        continue;
      }
      const p = e.causation_id ? pending.get(e.causation_id) : undefined;
      const before = p ? recordedDecision(e) : undefined;
      if (!p || !before) continue;
      pending.delete(e.causation_id!);
      // Decided once its recorded decision is known: a freeze shows only there.
      const key = historyKey(p.event.execution.session_id, p.event.execution.task_id);
      const h = key ? await historyOf(key) : undefined;
      const frozen = e.redacted_summary['reason_code'] === 'FROZEN_READ_ONLY';
      const task = await taskOf(p.event.execution.task_id);
      // The decision records the steps the gate saw (record.ts); a decision recorded before it did reads 0.
      const said = e.redacted_summary['task_steps'];
      const steps = typeof said === 'number' ? said : 0;
      const after = redecide(deps, draft, p, h, { frozen, task, steps });
      report.evaluated++;
      if (h) {
        const entry = historyEntry(p.intent, before, new Date(p.event.occurred_at));
        h.window.push(entry);
        if (entry.untrusted) h.untrusted = true;
      }
      if (before !== after.decision) addChange(report, p, before, after);
    }
    if (page.length < PAGE) break;
  }
  return report;
}

function addChange(
  report: ShadowReport,
  p: Pending,
  before: DecisionKind,
  after: { decision: DecisionKind; rule: string | null },
): void {
  const e = p.event;
  const change: ShadowChange = {
    event_id: e.event_id,
    runtime: e.runtime.kind ?? 'api',
    kind: p.intent.kind ?? 'other',
    tool: p.intent.tool,
    summary: actionText({
      tool: p.intent.tool,
      input: p.intent.input,
      ...(p.intent.action ? { action: p.intent.action } : {}),
      ...(p.intent.resource ? { resource: p.intent.resource } : {}),
    }),
    before,
    after: after.decision,
    rule: after.rule,
  };
  report.changed.push(change);
  const key = `${before}→${after.decision}`;
  report.counts[key] = (report.counts[key] ?? 0) + 1;
}

/** The seq just before the window's first intent, or of the newest `limit` intents; undefined when none. */
async function startSeq(log: EventLog, since: string, limit: number): Promise<number | undefined> {
  let beforeSeq: number | undefined;
  let counted = 0;
  let oldest: number | undefined;
  for (;;) {
    const page = await log.list({
      type: 'agent.tool.requested',
      since,
      newestFirst: true,
      limit: PAGE,
      ...(beforeSeq !== undefined ? { beforeSeq } : {}),
    });
    for (const row of page) {
      oldest = row.seq;
      if (++counted >= limit) return oldest - 1;
    }
    if (page.length < PAGE) return oldest === undefined ? undefined : oldest - 1;
    beforeSeq = oldest;
  }
}

/** The permission prompts of the window, by id: a gate intent they caused came from a hook body. */
async function permissionEvents(log: EventLog, since: string, afterSeq: number) {
  const out = new Map<string, Envelope>();
  let seq = afterSeq;
  for (;;) {
    const page = await log.list({ type: 'agent.permission.requested', since, afterSeq: seq, limit: PAGE });
    for (const row of page) out.set(row.envelope.event_id, row.envelope);
    if (page.length < PAGE) return out;
    seq = page[page.length - 1]!.seq;
  }
}

/** What a decision event says was decided: its summary, else (the hook route's fail path) its type. */
function recordedDecision(e: Envelope): DecisionKind | undefined {
  const said = e.redacted_summary['decision'];
  if (typeof said === 'string' && (DECISIONS as readonly string[]).includes(said))
    return said as DecisionKind;
  if (e.type === 'agent.tool.denied') return 'deny';
  if (e.type === 'agent.tool.authorized') return 'allow';
  return undefined;
}

/**
 * The intent an `agent.tool.requested` event recorded, from its vault payload: a hook body the
 * runtime sent (the event came from a hook, or from the permission prompt that caused it), the gate's
 * own seal `{ tool, input, action, resource, kind, args }`, or another module's sealed input (reach's
 * params) under the event's subject. Undefined when the payload has left the vault.
 */
async function recordedIntent(
  deps: ShadowDeps,
  e: Envelope,
  permission: Envelope | undefined,
): Promise<{ intent: Intent; envelope: Envelope } | undefined> {
  if (!e.payload_ref) return undefined;
  let bytes: Buffer | undefined;
  try {
    bytes = await deps.vault.get(e.payload_ref);
  } catch {
    return undefined; // a tampered payload is verify's to report; the run goes on without it
  }
  if (!bytes) return undefined;
  const base = {
    runtime: e.runtime.kind,
    event_type: permission?.type ?? e.type,
    action: e.subject.action,
    resource: e.subject.resource_ref,
  };
  const envelope = permission ?? e;
  if ((permission || e.runtime.adapter_version) && e.runtime.kind) {
    const hook = deps.intents?.fromHook(e.runtime.kind, bytes);
    if (!hook) return undefined;
    return { intent: { ...base, ...hook }, envelope };
  }
  const read = readJsonText(bytes.toString('utf8'));
  const v = read.ok ? read.value : undefined;
  if (!isObject(v)) return undefined;
  const subjectKind = isToolKind(e.subject.kind) ? e.subject.kind : 'other';
  if (typeof v['tool'] === 'string' && isObject(v['input'])) {
    const tool = v['tool'];
    const input = v['input'];
    const classified =
      isToolKind(v['kind']) && isObject(v['args'])
        ? { kind: v['kind'], args: v['args'] }
        : e.runtime.kind
          ? deps.intents?.classify(e.runtime.kind, tool, input)
          : undefined;
    return {
      intent: {
        ...base,
        tool,
        input,
        kind: classified?.kind ?? subjectKind,
        ...(classified ? { args: classified.args } : {}),
      },
      envelope,
    };
  }
  return { intent: { ...base, tool: e.subject.tool ?? '', input: v, kind: subjectKind }, envelope };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
