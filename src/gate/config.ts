import { z } from 'zod';
import { EVENT_TYPES } from '../envelope/catalogue.js';
import { TOOL_KINDS } from './kinds.js';
import { READ_ONLY_TOOLS } from './read-only.js';

/** The runtimes CONTRACT.md names; a rule that names another one is a typo, not a future runtime. */
export const GATE_RUNTIMES = ['claude-code', 'codex', 'hermes', 'gemini-cli', 'cursor', 'openclaw'] as const;

/** A capability outlives one tool call only briefly: five minutes covers a slow runner, not a session. */
export const DEFAULT_CAPABILITY_TTL_SECONDS = 300;
/** A tool input beyond 1 MiB is a file dump, not an intent; CEL over it costs milliseconds. */
export const DEFAULT_MAX_INPUT_BYTES = 1_048_576;
/** NTP keeps hosts within a second; ten seconds covers a badly synced resource service, not a replay. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 10;
/** A deferred call is worth retrying after a minute (a lock, a change window); a rule says otherwise. */
export const DEFAULT_DEFER_RETRY_AFTER_SECONDS = 60;
/** A deferral longer than a week is a deny. */
const MAX_RETRY_AFTER_SECONDS = 604_800;

const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const REASON_CODE = /^[A-Z][A-Z0-9_]{0,99}$/;

const eventType = z.enum(EVENT_TYPES, { error: (i) => `unknown event type ${JSON.stringify(i.input)}` });
const runtime = z.enum(GATE_RUNTIMES, {
  error: (i) => `unknown runtime ${JSON.stringify(i.input)}; one of ${GATE_RUNTIMES.join(', ')}`,
});
/** Exact tool names, or globs where `*` stands for any run of characters (`mcp__github__*`). */
const toolPattern = z.string().min(1).max(200);
const jsonObject = z.record(z.string(), z.unknown());

export const ruleMatchSchema = z.strictObject({
  types: z.array(eventType).min(1).optional(),
  runtimes: z.array(runtime).min(1).optional(),
  tools: z.array(toolPattern).min(1).optional(),
  kinds: z
    .array(
      z.enum(TOOL_KINDS, {
        error: (i) => `unknown kind ${JSON.stringify(i.input)}; one of ${TOOL_KINDS.join(', ')}`,
      }),
    )
    .min(1)
    .optional(),
});

export const ruleSchema = z
  .strictObject({
    id: z.string().regex(RULE_ID, 'a rule id is letters, digits and _ . : - (at most 128)'),
    priority: z.int().min(-1_000_000).max(1_000_000).default(0),
    match: ruleMatchSchema.optional(),
    when: z.string().min(1).max(10_000).default('true'),
    decision: z.enum(['allow', 'deny', 'require_approval', 'defer', 'modify']),
    reason_code: z.string().regex(REASON_CODE, 'reason_code is UPPER_SNAKE_CASE, e.g. FORCE_PUSH'),
    risk: z.enum(['low', 'high']).optional(),
    /** modify: a JSON merge patch (RFC 7386) laid over the original input; `null` removes a key. */
    input: jsonObject.optional(),
    /** modify: a CEL expression whose value is the whole replacement input (a map). */
    input_expr: z.string().min(1).max(10_000).optional(),
    constraints: jsonObject.optional(),
    /** defer: how long until a retry of the same plan is decided afresh (default `gate.defer_retry_after_seconds`). */
    retry_after_seconds: z.int().min(1).max(MAX_RETRY_AFTER_SECONDS).optional(),
    description: z.string().max(2_000).optional(),
  })
  .superRefine((rule, ctx) => {
    const given = Number(rule.input !== undefined) + Number(rule.input_expr !== undefined);
    if (rule.decision === 'modify' && given !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['decision'],
        message: 'a modify rule needs exactly one of `input` (merge patch) or `input_expr` (CEL)',
      });
    }
    if (rule.decision !== 'defer' && rule.retry_after_seconds !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['retry_after_seconds'],
        message: 'only a defer rule may carry `retry_after_seconds`',
      });
    }
    if (rule.decision !== 'modify' && given > 0) {
      ctx.addIssue({
        code: 'custom',
        path: [rule.input !== undefined ? 'input' : 'input_expr'],
        message: 'only a modify rule may carry `input` or `input_expr`',
      });
    }
  });

const fallbackDecision = z.enum(['allow', 'deny', 'require_approval', 'defer']);

export const gateOptionsSchema = z.strictObject({
  /** What a high-risk intent gets when a rule errors: deny, or defer where a retry may succeed. */
  fail_mode_high: z.enum(['deny', 'defer']).default('deny'),
  /** Whether a low-risk intent may go on (tagged `policy_unavailable`) when a rule errors. */
  fail_open_low: z.boolean().default(true),
  capability_ttl_seconds: z.int().min(1).max(86_400).default(DEFAULT_CAPABILITY_TTL_SECONDS),
  clock_skew_seconds: z.int().min(0).max(300).default(DEFAULT_CLOCK_SKEW_SECONDS),
  /** How long a `defer` holds: the decision's `retry_after` is now plus this, unless the rule says. */
  defer_retry_after_seconds: z
    .int()
    .min(1)
    .max(MAX_RETRY_AFTER_SECONDS)
    .default(DEFAULT_DEFER_RETRY_AFTER_SECONDS),
  max_input_bytes: z
    .int()
    .min(1_024)
    .max(64 * 1_048_576)
    .default(DEFAULT_MAX_INPUT_BYTES),
  /**
   * The decision when no rule matches. Allow for both by default: the gate ships as a deny-list, so
   * a fresh install does not block every shell command; set `high: require_approval` to invert it.
   */
  default_decision: z
    .strictObject({ low: fallbackDecision.default('allow'), high: fallbackDecision.default('allow') })
    .prefault({}),
  /** Low-risk tools (exact names or globs); the default is READ_ONLY_TOOLS, shared with the hook bridge. */
  read_only_tools: z.array(toolPattern).default([...READ_ONLY_TOOLS]),
  /** JSON Schemas of tool inputs beyond the built-in ones; a `modify` output must validate. */
  tool_schemas: z.record(z.string().min(1), jsonObject).default({}),
});

export const policyFileSchema = z.strictObject({ rules: z.array(ruleSchema) });

/** The keys the gate owns in the main config; the config module composes them into its schema. */
export const policyConfigShape = {
  rules: z.array(ruleSchema).default([]),
  policy_files: z.array(z.string().min(1)).default([]),
  gate: gateOptionsSchema.prefault({}),
};
export const policyConfigSchema = z.strictObject(policyConfigShape);

export type Rule = z.output<typeof ruleSchema>;
export type RuleInput = z.input<typeof ruleSchema>;
export type GateOptions = z.output<typeof gateOptionsSchema>;
export type GateOptionsInput = z.input<typeof gateOptionsSchema>;

/** A loaded policy: every rule in source order (the tie-break order) and the gate options. */
export interface Policy {
  rules: Rule[];
  gate: GateOptions;
}

export function defaultGateOptions(): GateOptions {
  return gateOptionsSchema.parse({});
}
