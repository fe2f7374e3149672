import type { Envelope } from '../envelope/index.js';
import { port } from '../kernel/port.js';
import type { Principal } from '../kernel/module.js';
import type { Db } from '../store/port.js';
import type { ApprovalPlan, PlanRecheck } from '../approvals/port.js';
import type { Classified, ToolArgs, ToolKind } from './kinds.js';

export { isToolKind, TOOL_KINDS, type Classified, type ToolArgs, type ToolKind } from './kinds.js';

/** The five decisions of seed 001; the set is small and stable on purpose. */
export const DECISIONS = ['allow', 'deny', 'require_approval', 'defer', 'modify'] as const;
export type DecisionKind = (typeof DECISIONS)[number];

export interface MatchedRule {
  id: string;
  decision: DecisionKind;
}

/** A short-lived capability bound to exactly the plan decided (docs/policy.md, capabilities). */
export interface CapabilityGrant {
  id: string;
  expires_at: string;
  token: string;
}

/** The decision contract of CONTRACT.md, field for field: the one declaration every module reads. */
export interface GateDecision {
  decision: DecisionKind;
  reason_code: string;
  /** Human text; shown to the agent or the user depending on the runtime. */
  reason?: string;
  /** The serving revision (`none` when no policy was ever loaded: the decision was made without one). */
  policy_revision: string;
  plan_digest: string;
  capability?: CapabilityGrant;
  constraints: Record<string, unknown>;
  matched_rules: MatchedRule[];
  approval_id?: string;
  /** The whole modified tool input, when `decision` is `modify`. */
  input?: Record<string, unknown>;
  /**
   * `defer` only: when to try again (ISO 8601). A retry of the same plan before then is deferred
   * again without being decided; one after it is decided afresh.
   */
  retry_after?: string;
  /** Set when a low-risk intent was let through because the policy could not be evaluated. */
  tags?: string[];
}

/**
 * What a caller acts on when no gate runs: deny (fail closed). Reach, agents and every other caller
 * that asks the gate before an effect use this one, so the refusal reads the same everywhere.
 */
export function gateUnavailable(): GateDecision {
  return {
    decision: 'deny',
    reason_code: 'GATE_UNAVAILABLE',
    reason: 'the policy gate is not running',
    policy_revision: 'none',
    plan_digest: '',
    constraints: {},
    matched_rules: [],
  };
}

/** A tool intent as `POST /v1/gate/evaluate` takes it. */
export interface GateIntent {
  tool: string;
  input: Record<string, unknown>;
  action?: string;
  resource?: string;
  task_id?: string;
  session_id?: string;
  runtime?: string;
  /** The envelope type that carries the intent (`agent.tool.requested`, `agent.permission.requested`). */
  event_type?: string;
  /** The canonical kind, as the runtime adapter (or the caller) classified the tool; `other` when absent. */
  kind?: ToolKind;
  /** The kind's canonical args (`command`, `path`, `url`, …); the gate derives `argv`, `commands`, `host`. */
  args?: ToolArgs;
  /**
   * The intent brings outside content into the session (a reach tool declared `untrusted: true`, an
   * A2A message): from here on `session.untrusted` is true. Web fetches and searches count without it.
   */
  untrusted?: boolean;
}

export interface GateContext {
  principal: Principal;
  /** The event that carried the intent, already in the log: the decision is caused by it. */
  cause?: Envelope;
  /**
   * Instead of `cause`: appends the event that carries the intent inside the gate's own decision
   * transaction, so the event, the request and the answer commit together (the hook route: one commit
   * per tool call). Called once, after the gate's reads; it must use only the port it is given.
   */
  record?: (tx: Db) => Promise<Envelope>;
  /**
   * With `record`: write later, in the caller's own transaction. The gate decides at once (CEL's
   * `envelope` is the preview of the event to come), writes nothing, and hands over `commit`, which
   * appends the caller's event (`record`), the gate's request and the decision into `tx`; the caller
   * runs it in the commit that also holds its outcome (a read touch: one commit, its backend running
   * in between, docs/reach.md "One commit per read touch"). A `require_approval` is recorded at once,
   * as without this field, and `later` is not called.
   */
  later?: (commit: (tx: Db) => Promise<Envelope>) => void;
}

/** The serving policy as a person reads it: each rule with where it was written. */
export interface PolicyView {
  /** `none` while no policy ever loaded. */
  revision: string;
  loaded_at: string | null;
  /** The last reload's first problem, until one succeeds (the serving revision stays). */
  last_error: string | null;
  rules: {
    id: string;
    decision: DecisionKind;
    reason_code: string;
    priority: number;
    when: string;
    tools: string[] | null;
    kinds: string[] | null;
    description: string | null;
    /** The file and 1-based line; line 0 when the rules came from a parsed section. */
    source: { file: string; line: number } | null;
  }[];
}

/** A dry run's answer: the decision and why, with nothing written anywhere. */
export interface Simulation {
  decision: GateDecision;
  /** Rules whose condition was looked at, in evaluation order. */
  considered: string[];
  errors: { rule_id: string; message: string }[];
  risk: string | null;
}

/** What a draft policy is run over (`POST /v1/policy/shadow`, `switchboard policy shadow`). */
export interface ShadowRequest {
  /** The draft: a config file's `rules:` and `gate:`, or a policy file's `rules:` (no `policy_files`). */
  policyYaml: string;
  /** The window: `7d`, `24h`, `30m`, or an ISO 8601 time; default 7 days back. */
  since?: string;
  /** At most this many intents, the newest of the window; default 100,000. */
  limit?: number;
}

/** One recorded intent the draft decides differently. */
export interface ShadowChange {
  /** The `agent.tool.requested` event of the intent. */
  event_id: string;
  runtime: string;
  kind: string;
  tool: string;
  /** The tool and its command, path or URL, cut short (as an approver reads it). */
  summary: string;
  /** The decision recorded then, and the draft's. */
  before: string;
  after: string;
  /** The draft rule that decided, or null (no rule matched, or the gate's own reason). */
  rule: string | null;
}

/** A shadow run's answer; nothing was written anywhere to get it. */
export interface ShadowReport {
  /** Recorded intents re-decided. */
  evaluated: number;
  /**
   * Recorded intents of the window that could not be re-decided: their payload has left the vault
   * (retention) or no longer reads as an intent. Not in `evaluated`; a run that skips many says less.
   */
  skipped: number;
  /** Oldest first. */
  changed: ShadowChange[];
  /** `"allow→deny": n`, one key per kind of change. */
  counts: Record<string, number>;
}

export interface GateService {
  evaluate(intent: GateIntent, ctx: GateContext): Promise<GateDecision>;
  /**
   * The re-check when a person approved `planDigest`: evaluates under the current policy, and where the
   * policy still says require_approval, that approval satisfies it (allow + capability) as long as the
   * plan is the one approved. Never creates another approval.
   */
  evaluateApproved?(intent: GateIntent, ctx: GateContext, planDigest: string): Promise<GateDecision>;
  /** The serving revision and its rules (the console's policy page). */
  policy?(): PolicyView;
  /**
   * What the serving policy would decide for `intent` asked by `principal`: no event, no approval, no
   * capability (the console's simulator).
   */
  simulate?(intent: GateIntent, principal: Principal): Promise<Simulation>;
  /**
   * Re-decides the recorded intents of a window under a draft policy, each with the history it had,
   * and reports what would change. Throws `validation_failed` (details: the lint lines) for a broken draft.
   */
  shadow?(req: ShadowRequest): Promise<ShadowReport>;
  /**
   * Marks a session (or, without one, a task) untrusted from now on, for content that reached it
   * other than through a tool intent (an A2A message). Intents marked `untrusted` do this themselves.
   */
  markUntrusted?(scope: { session_id?: string; task_id?: string }, source: string): Promise<void>;
  /**
   * Whether the tenant, or the agent named (null: the tenant only), is frozen. Tasks refuse new
   * launches and notify sends nothing for a frozen agent or tenant (docs/policy.md, incidents).
   */
  frozen?(agent: string | null): Promise<boolean>;
  /**
   * A capability already issued, checked where it is about to be used: signature, expiry, the plan,
   * revocation, and a freeze over its agent or tenant when its tool is not read-only (`FROZEN`, with the
   * freeze's reason in `detail`). Reach checks an approval's capability with it before the run.
   */
  verifyIssued?(c: {
    token: string;
    plan: { tool: string; action?: string | null; resource?: string | null; input: Record<string, unknown> };
    expect?: { tenant?: string; task?: string | null };
  }): Promise<{ ok: true } | { ok: false; reason: string; detail?: string }>;
}

/**
 * What only the runtime adapters know and the gate may not import: how a runtime's tool is classified,
 * and how a recorded hook body reads as an intent again (shadow runs). The app root hands the
 * adapters' implementation to the gate module (src/server/modules.ts, `runtimeIntents`).
 */
export interface IntentReader {
  classify(runtime: string, tool: string, input: Record<string, unknown>): Classified | undefined;
  /** A hook body as the runtime sent it, back to the intent it carried; undefined if it carried none. */
  fromHook(
    runtime: string,
    raw: unknown,
  ): { tool: string; input: Record<string, unknown>; kind: ToolKind; args: ToolArgs } | undefined;
}

/** The policy gate (src/gate/module.ts provides it). */
export const gatePort = port<GateService>('gate');

/** The plan an approval freezes for an intent: what would run, nothing about who or why. */
export function approvalPlan(intent: GateIntent): ApprovalPlan {
  return {
    tool: intent.tool,
    input: intent.input,
    ...(intent.action !== undefined ? { action: intent.action } : {}),
    ...(intent.resource !== undefined ? { resource: intent.resource } : {}),
  };
}

/**
 * The re-check approvals run on an approved plan, backed by a gate: its `evaluateApproved` when it
 * has one (the plain `evaluate` would answer `require_approval` again for a plan that still needs
 * approval, which cannot issue a capability), else `evaluate`. The gate module hands this to approvals.
 */
export function planRecheckOf(gate: GateService): PlanRecheck {
  return (plan, asker, frozenDigest) => {
    const { task_id, session_id, ...rest } = plan;
    const intent: GateIntent = { ...rest };
    if (task_id !== undefined) intent.task_id = task_id;
    if (session_id !== undefined) intent.session_id = session_id;
    return gate.evaluateApproved
      ? gate.evaluateApproved(intent, { principal: asker }, frozenDigest)
      : gate.evaluate(intent, { principal: asker });
  };
}
