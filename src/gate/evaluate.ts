import { isEventType } from '../envelope/catalogue.js';
import { issueCapability } from './capability.js';
import { celMessage, fromCel, toCel } from '../cel/index.js';
import type { CelContext } from './cel.js';
import type { CompiledPolicy, CompiledRule } from './compile.js';
import { readBit, toolMatcher } from './compile.js';
import { defaultGateOptions, type GateOptions } from './config.js';
import { canonicalJson, sha256Hex } from '../envelope/digest.js';
import { planDigest } from '../envelope/plan.js';
import { canonicalArgs } from './args.js';
import type { ToolKind } from './kinds.js';
import { type HistoryView, INDEX_VARIABLE } from './history-index.js';
import type {
  Decision,
  DecisionKind,
  GateContext,
  HistoryEntry,
  Intent,
  MatchedRule,
  Plan,
  Risk,
} from './types.js';

/** deny > defer > require_approval > modify > allow (seed 001); modify is an allow with changed input. */
const RANK: Record<DecisionKind, number> = { allow: 1, modify: 2, require_approval: 3, defer: 4, deny: 5 };

export const DEFAULT_EVENT_TYPE = 'agent.tool.requested';
/** `session.kinds`, `hosts` and `files` of a session with no history. */
const NO_COUNTS: ReadonlyMap<string, bigint> = new Map();
/** What `policy_revision` says when no revision is loaded: the decision was made without a policy. */
export const NO_REVISION = 'none';

export interface RuleError {
  rule_id: string;
  message: string;
}

/** Everything the audit log and `policy test` need beyond the decision contract. */
export interface Trace {
  risk: Risk;
  type: string;
  /** Rules whose condition was looked at, in evaluation order; proves the index skipped the rest. */
  considered: string[];
  errors: RuleError[];
  policy_unavailable: boolean;
  /** The plan as asked; differs from `decision.plan_digest` only after a modify. */
  original_plan_digest: string;
  modify?: { rule_id: string; original: Record<string, unknown>; replacement: Record<string, unknown> };
  /** The plan was deferred before and retried before its `retry_after`: that defer stands (service/deferrals.ts). */
  held?: boolean;
}

export interface Evaluation {
  decision: Decision;
  trace: Trace;
}

/** The gate: one intent in, one decision out. Pure apart from the clock and the capability id. */
export function evaluate(
  compiled: CompiledPolicy | undefined,
  intent: Intent,
  ctx: GateContext = {},
): Decision {
  return evaluateWithTrace(compiled, intent, ctx).decision;
}

const fallbackReadOnly = toolMatcher(defaultGateOptions().read_only_tools);

export function evaluateWithTrace(
  compiled: CompiledPolicy | undefined,
  intent: Intent,
  ctx: GateContext = {},
): Evaluation {
  const now = ctx.now ?? new Date();
  const evaluation = decide(compiled, intent, ctx, now);
  const d = evaluation.decision;
  if (d.decision === 'defer' && d.retry_after === undefined) {
    // A defer the gate gave itself (fail_mode_high, default_decision): the configured wait.
    const seconds = (compiled?.options ?? defaultGateOptions()).defer_retry_after_seconds;
    d.retry_after = new Date(now.getTime() + seconds * 1000).toISOString();
  }
  return evaluation;
}

function decide(
  compiled: CompiledPolicy | undefined,
  intent: Intent,
  ctx: GateContext,
  now: Date,
): Evaluation {
  const options = compiled?.options ?? defaultGateOptions();
  const type = intent.event_type ?? DEFAULT_EVENT_TYPE;
  const plan: Plan = {
    tool: intent.tool,
    action: intent.action ?? null,
    resource: intent.resource ?? null,
    input: intent.input,
  };
  const readOnly = compiled ? compiled.isReadOnly(intent.tool) : fallbackReadOnly(intent.tool);
  const trace: Trace = {
    risk: readOnly ? 'low' : 'high',
    type,
    considered: [],
    errors: [],
    policy_unavailable: false,
    original_plan_digest: '',
  };
  const revision = compiled?.revision ?? NO_REVISION;

  const sized = sizedPlanDigest(plan);
  if (!sized) return finish(decided('deny', 'INPUT_INVALID', { revision, digest: '' }), trace);
  const { size, digest } = sized;
  trace.original_plan_digest = digest;
  const base = { revision, digest };

  if (!compiled) return finish(unavailable(trace, options, base), trace);
  if (!isEventType(type)) return finish(decided('deny', 'UNKNOWN_EVENT_TYPE', base), trace);
  if (size > options.max_input_bytes) return finish(decided('deny', 'INPUT_TOO_LARGE', base), trace);

  const candidates = compiled.candidates(type, intent.runtime ?? null, intent.tool, intent.kind ?? 'other');
  let cel: DecisionContext | undefined;
  const celContext = (r: CompiledRule) => {
    cel ??= new DecisionContext(compiled, intent, ctx, type, now);
    return cel.prepare(r.reads);
  };

  // Every candidate is looked at, in order: the list is known before any runs, and kept with it.
  trace.considered = consideredIds(candidates);
  const matched: CompiledRule[] = [];
  let erroredHigh = false;
  for (const r of candidates) {
    if (!r.when) {
      matched.push(r);
      continue;
    }
    try {
      const value = r.when(celContext(r));
      if (value === true) matched.push(r);
      else if (value !== false) throw new Error(`the condition gave ${typeof value}, not bool`);
    } catch (err) {
      trace.errors.push({ rule_id: r.rule.id, message: celMessage(err) });
      if (r.rule.risk === 'high') erroredHigh = true;
    }
  }

  trace.risk = riskOf(matched, trace.risk, erroredHigh);
  const matchedRules: MatchedRule[] = matched.map((r) => ({ id: r.rule.id, decision: r.rule.decision }));
  const withMatches = (d: Decision): Decision => ({ ...d, matched_rules: matchedRules });

  if (trace.errors.length > 0) {
    if (trace.risk === 'high' || !options.fail_open_low) {
      return finish(withMatches(decided(options.fail_mode_high, 'POLICY_ERROR', base)), trace);
    }
    trace.policy_unavailable = true;
  }
  if (ctx.frozen && trace.risk === 'high') {
    return finish(withMatches(decided('deny', 'FROZEN_READ_ONLY', base)), trace);
  }

  const winner = pickWinner(matched);
  if (!winner) {
    const reason = trace.policy_unavailable ? 'POLICY_UNAVAILABLE' : 'NO_RULE_MATCHED';
    const d = withMatches(decided(options.default_decision[trace.risk], reason, base));
    return finish(grant(tagged(d, trace), plan, compiled.revision, options, ctx, now, trace), trace);
  }

  let decision = withMatches(decided(winner.rule.decision, winner.rule.reason_code, base));
  decision.constraints = mergeConstraints(winner, matched);
  if (winner.rule.decision === 'defer') {
    const seconds = winner.rule.retry_after_seconds ?? options.defer_retry_after_seconds;
    decision.retry_after = new Date(now.getTime() + seconds * 1000).toISOString();
  }
  let finalPlan = plan;
  if (winner.rule.decision === 'modify') {
    const modified = modify(compiled, winner, plan, options, celContext);
    if (!modified.ok) {
      return finish(withMatches(decided(options.fail_mode_high, modified.reason, base)), trace);
    }
    finalPlan = { ...plan, input: modified.input };
    trace.modify = { rule_id: winner.rule.id, original: plan.input, replacement: modified.input };
    decision = { ...decision, plan_digest: planDigest(finalPlan), input: modified.input };
  }
  return finish(
    grant(tagged(decision, trace), finalPlan, compiled.revision, options, ctx, now, trace),
    trace,
  );
}

/**
 * The ids of a candidate list, built once per list: `candidates` hands out the same array for the
 * same (type, runtime, tool, kind), and a list of 70 ids was a tenth of a decision's allocation.
 * Frozen, as every trace of that list shares it.
 */
const CONSIDERED = new WeakMap<readonly CompiledRule[], string[]>();
function consideredIds(candidates: readonly CompiledRule[]): string[] {
  let ids = CONSIDERED.get(candidates);
  if (!ids) {
    ids = Object.freeze(candidates.map((r) => r.rule.id)) as string[];
    CONSIDERED.set(candidates, ids);
  }
  return ids;
}

function decided(
  decision: DecisionKind,
  reason: string,
  base: { revision: string; digest: string },
): Decision {
  return {
    decision,
    reason_code: reason,
    policy_revision: base.revision,
    plan_digest: base.digest,
    constraints: {},
    matched_rules: [],
  };
}

function finish(decision: Decision, trace: Trace): Evaluation {
  return { decision, trace };
}

/** No revision loaded: high risk fails closed; read-only may go on, tagged and without a capability. */
function unavailable(
  trace: Trace,
  options: GateOptions,
  base: { revision: string; digest: string },
): Decision {
  if (trace.risk === 'high' || !options.fail_open_low) {
    return decided(options.fail_mode_high, 'POLICY_UNAVAILABLE', base);
  }
  trace.policy_unavailable = true;
  return tagged(decided('allow', 'POLICY_UNAVAILABLE', base), trace);
}

function tagged(decision: Decision, trace: Trace): Decision {
  if (!trace.policy_unavailable) return decision;
  return { ...decision, constraints: { ...decision.constraints, policy_unavailable: true } };
}

/**
 * allow and modify carry a capability bound to the plan that will run. Not when the policy was
 * unavailable: seed 001 lets read-only work fail open but "限制能力" — no authority to carry on.
 */
function grant(
  decision: Decision,
  plan: Plan,
  revision: string,
  options: GateOptions,
  ctx: GateContext,
  now: Date,
  trace: Trace,
): Decision {
  const signer = ctx.signer;
  const key = signer?.keys[0];
  if (!key || trace.policy_unavailable || (decision.decision !== 'allow' && decision.decision !== 'modify')) {
    return decision;
  }
  const issued = issueCapability({
    key,
    tenant: ctx.tenant_id ?? 'default',
    task: ctx.task?.id ?? null,
    agent: ctx.agent_id ?? null,
    plan,
    plan_digest: decision.plan_digest,
    policy_revision: revision,
    budget: ctx.budgets ?? {},
    now,
    ttl_seconds: signer.ttl_seconds ?? options.capability_ttl_seconds,
  });
  return { ...decision, capability: { id: issued.id, expires_at: issued.expires_at, token: issued.token } };
}

/** Candidates arrive sorted by priority then policy order, so the first of the top level wins. */
function pickWinner(matched: readonly CompiledRule[]): CompiledRule | undefined {
  let winner: CompiledRule | undefined;
  for (const r of matched) if (!winner || RANK[r.rule.decision] > RANK[winner.rule.decision]) winner = r;
  return winner;
}

/** A rule's declared risk beats the read-only list, and high beats low. */
function riskOf(matched: readonly CompiledRule[], fallback: Risk, erroredHigh: boolean): Risk {
  if (erroredHigh || matched.some((r) => r.rule.risk === 'high')) return 'high';
  if (matched.some((r) => r.rule.risk === 'low')) return 'low';
  return fallback;
}

/** Every matched rule contributes constraints; on a clash the winner, then higher priority, prevails. */
function mergeConstraints(winner: CompiledRule, matched: readonly CompiledRule[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of [winner, ...matched]) {
    for (const [k, v] of Object.entries(r.rule.constraints ?? {})) if (!(k in out)) out[k] = v;
  }
  return out;
}

type Modified = { ok: true; input: Record<string, unknown> } | { ok: false; reason: string };

function modify(
  compiled: CompiledPolicy,
  winner: CompiledRule,
  plan: Plan,
  options: GateOptions,
  celContext: (r: CompiledRule) => CelContext,
): Modified {
  let replacement: unknown;
  if (winner.input_expr) {
    try {
      const out = fromCel(winner.input_expr(celContext(winner)));
      if (!out.ok) return { ok: false, reason: 'POLICY_ERROR' };
      replacement = out.value;
    } catch {
      return { ok: false, reason: 'POLICY_ERROR' };
    }
  } else {
    replacement = mergePatch(plan.input, winner.rule.input ?? {});
  }
  if (!isPlainObject(replacement)) return { ok: false, reason: 'MODIFY_INVALID_INPUT' };
  const size = inputSize(replacement);
  if (size === undefined || size > options.max_input_bytes)
    return { ok: false, reason: 'MODIFY_INVALID_INPUT' };
  const check = compiled.toolSchemas(plan.tool, replacement);
  if (check.kind === 'unknown') return { ok: false, reason: 'MODIFY_SCHEMA_UNKNOWN' };
  if (check.kind === 'invalid') return { ok: false, reason: 'MODIFY_INVALID_INPUT' };
  return { ok: true, input: replacement };
}

/** RFC 7386 JSON merge patch: objects merge key by key, `null` deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * What CEL reads for one decision. The cheap variables are set when it is built; the ones that cost
 * a conversion (`input`, `args` with its shell parse, `task`, `envelope`, `budgets`, the history
 * index) are built when the first rule that reads them runs (`prepare`, with the names compile.ts
 * found in the rule), then kept. They are data properties, not getters: cel-js reads a variable by
 * name on every use, and through getters those reads were 7 % of a decision's profile, as data
 * properties about 1 % (docs/policy.md). One class, so every decision's context has one shape.
 */
class DecisionContext {
  readonly tool: string;
  readonly kind: ToolKind;
  // Entries hold strings, bools and lists of strings only: CEL reads them as they are, no copy.
  readonly history: readonly HistoryEntry[];
  readonly session: SessionView;
  readonly action: string | null;
  readonly resource: string | null;
  readonly runtime: string | null;
  readonly now: Date;
  input: unknown = undefined;
  args: unknown = undefined;
  task: unknown = undefined;
  envelope: unknown = undefined;
  budgets: unknown = undefined;
  [INDEX_VARIABLE]: HistoryView | undefined = undefined;
  /** The lazy variables built so far (their LAZY bits). */
  private built = 0;

  constructor(
    private readonly compiled: CompiledPolicy,
    private readonly intent: Intent,
    private readonly ctx: GateContext,
    private readonly type: string,
    now: Date,
  ) {
    this.tool = intent.tool;
    this.kind = intent.kind ?? 'other';
    this.history = ctx.window?.entries ?? ctx.history ?? [];
    this.session = sessionView(ctx);
    this.action = intent.action ?? null;
    this.resource = intent.resource ?? null;
    this.runtime = intent.runtime ?? null;
    this.now = now;
  }

  /** Builds the variables of `reads` (bits of CompiledRule.reads) not built yet; undefined: every one. */
  prepare(reads: number | undefined): CelContext {
    const missing = (reads ?? ALL_LAZY) & ALL_LAZY & ~this.built;
    if (missing !== 0) for (const [name, bit] of LAZY) if ((missing & bit) !== 0) this.build(name, bit);
    return this as unknown as CelContext;
  }

  private build(name: string, bit: number): void {
    this.built |= bit;
    switch (name) {
      case 'input':
        this.input = toCel(this.intent.input);
        return;
      // Parsing a shell line costs microseconds: only a rule that reads `args` pays for it.
      case 'args':
        this.args = toCel(canonicalArgs({ kind: this.kind, args: this.intent.args ?? {} }));
        return;
      case 'task': {
        const facts = this.ctx.task ?? {};
        this.task = toCel({
          id: facts.id ?? null,
          owner: facts.owner ?? null,
          steps: facts.steps ?? 0,
          wall_time_seconds: facts.wall_time_seconds ?? 0,
        });
        return;
      }
      case 'envelope':
        this.envelope = toCel(this.ctx.envelope ?? { type: this.type });
        return;
      case 'budgets':
        this.budgets = toCel(this.ctx.budgets ?? {});
        return;
      // The answers of indexed `history.exists` calls (history-index.ts): synced once, on first read.
      case INDEX_VARIABLE:
        this[INDEX_VARIABLE] = this.ctx.window?.index(this.compiled.history);
        return;
    }
  }
}

/** The variables DecisionContext builds on demand, with their bits of CompiledRule.reads. */
const LAZY: ReadonlyArray<readonly [string, number]> = [
  'input',
  'args',
  'task',
  'envelope',
  'budgets',
  INDEX_VARIABLE,
].map((name) => [name, readBit(name)] as const);
const ALL_LAZY = LAZY.reduce((all, [, bit]) => all | bit, 0);

interface SessionView {
  id: string | null;
  untrusted: boolean;
  kinds: ReadonlyMap<string, bigint>;
  hosts: ReadonlyMap<string, bigint>;
  files: ReadonlyMap<string, bigint>;
}

/** The session facts as CEL reads them; a context without a session reads as an empty, trusted one. */
function sessionView(ctx: GateContext): SessionView {
  const s = ctx.session;
  if (!s) return EMPTY_SESSION;
  return {
    id: s.id ?? null,
    untrusted: s.untrusted ?? false,
    kinds: s.kinds ?? NO_COUNTS,
    hosts: s.hosts ?? NO_COUNTS,
    files: s.files ?? NO_COUNTS,
  };
}

const EMPTY_SESSION: SessionView = Object.freeze({
  id: null,
  untrusted: false,
  kinds: NO_COUNTS,
  hosts: NO_COUNTS,
  files: NO_COUNTS,
});

/**
 * The plan's digest (`planDigest`) and the UTF-8 bytes of its input's JSON, from one serialization
 * of the input: RFC 8785 sorts the plan's keys as action, input, resource, tool, so the canonical
 * plan is the canonical input inside four fields (evaluate.test.ts pins it to `planDigest`).
 * Undefined when the input is not a JSON object, or has no canonical form.
 */
function sizedPlanDigest(plan: Plan): { size: number; digest: string } | undefined {
  if (!isPlainObject(plan.input)) return undefined;
  let input: string;
  try {
    input = canonicalJson(plan.input);
  } catch {
    return undefined;
  }
  const text = `{"action":${canonicalJson(plan.action)},"input":${input},"resource":${canonicalJson(plan.resource)},"tool":${canonicalJson(plan.tool)}}`;
  return { size: Buffer.byteLength(input, 'utf8'), digest: `sha256:${sha256Hex(text)}` };
}

/** UTF-8 bytes of the input's JSON, or undefined when it is not a JSON object at all. */
function inputSize(input: unknown): number | undefined {
  if (!isPlainObject(input)) return undefined;
  try {
    return Buffer.byteLength(JSON.stringify(input), 'utf8');
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
