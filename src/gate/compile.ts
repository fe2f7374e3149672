import { canonicalJson, sha256Hex } from '../envelope/digest.js';
import { identifiers } from '../cel/ast.js';
import { withClosure } from '../cel/closures.js';
import { CEL_VARIABLES, CLOSURE_FUNCTIONS, type CelProgram, compileCel } from './cel.js';
import {
  HistoryTable,
  INDEX_VARIABLE,
  INDEXED_CLOSURE_FUNCTIONS,
  indexCondition,
  withIndex,
} from './history-index.js';
import type { GateOptions, Policy, Rule } from './config.js';
import type { PolicyProblem, RuleOrigin } from './load.js';
import { buildToolSchemas, type ToolSchemaRegistry } from './schemas.js';

export interface CompiledRule {
  rule: Rule;
  /** Position in the policy: the stable tie-break between rules of equal priority. */
  index: number;
  /**
   * `undefined` when the condition is the literal `true`: nothing to evaluate. Its plain-JS closure
   * where it has one (src/cel/closures.ts), the history index where it asks one, cel-js otherwise:
   * every path gives `celWhen`'s answer.
   */
  when: CelProgram | undefined;
  /**
   * The same condition as cel-js alone runs it (no closure, no index: `history.exists` walks). The
   * reference the differential tests hold `when` to, and what the benches' "bare CEL" rows time.
   */
  celWhen: CelProgram | undefined;
  input_expr: CelProgram | undefined;
  /**
   * The variables `when` and `input_expr` can read, from their parse trees, one bit each (`readBit`):
   * the decision builds only these before running them (evaluate.ts). Undefined means any of them.
   */
  reads?: number;
  types: ReadonlySet<string> | undefined;
  runtimes: ReadonlySet<string> | undefined;
  kinds: ReadonlySet<string> | undefined;
  /** Where the rule was written (file and line; line 0 for a parsed section): the console shows it. */
  origin: RuleOrigin | undefined;
}

export interface CompiledPolicy {
  revision: string;
  options: GateOptions;
  rules: readonly CompiledRule[];
  /** The rules that can match this (type, runtime, tool, kind), highest priority first, then policy order. */
  candidates(type: string, runtime: string | null, tool: string, kind?: string): readonly CompiledRule[];
  isReadOnly(tool: string): boolean;
  toolSchemas: ToolSchemaRegistry;
  /** The `history.exists(h, …)` predicates answered from each session's index (history-index.ts). */
  history: HistoryTable;
}

export type CompileResult = { ok: true; compiled: CompiledPolicy } | { ok: false; problems: PolicyProblem[] };

/** What a rule can read: the declared variables and the history index's hidden one. */
const READABLE: readonly string[] = [...Object.keys(CEL_VARIABLES), INDEX_VARIABLE];

/** The bit of `CompiledRule.reads` for a variable; 0 for a name that is none (a macro's own variable). */
export function readBit(name: string): number {
  const i = READABLE.indexOf(name);
  return i < 0 ? 0 : 1 << i;
}
/** Distinct (type, runtime, tool) keys remembered per revision; tool names come from agents, so bounded. */
const CANDIDATE_CACHE_SIZE = 4_096;
/** 64 bits of the digest: unique across any realistic number of revisions, short enough to read aloud. */
const REVISION_HEX_CHARS = 16;

/** `rev_` + short sha256 of the canonical policy: the same rules and options give the same revision. */
export function policyRevision(policy: Policy): string {
  return `rev_${sha256Hex(canonicalJson(policy)).slice(0, REVISION_HEX_CHARS)}`;
}

/** `m`'s map at `k`, made empty when there is none yet. */
function inner<K, V extends Map<unknown, unknown>>(m: Map<K, V>, k: K): V {
  let v = m.get(k);
  if (!v) {
    v = new Map() as V;
    m.set(k, v);
  }
  return v;
}

/** Compiles every CEL expression once and builds the indexes; reports every problem with its place. */
export function compilePolicy(policy: Policy, origins: readonly RuleOrigin[] = []): CompileResult {
  const problems: PolicyProblem[] = [];
  const rules: CompiledRule[] = [];
  const history = new HistoryTable();

  policy.rules.forEach((rule, index) => {
    const origin = origins[index];
    const problem = (path: string, line: number | undefined, message: string) =>
      problems.push({
        file: origin?.file ?? 'policy',
        line: line ?? origin?.line ?? 0,
        column: line === undefined ? (origin?.column ?? 0) : 1,
        path: `rule ${rule.id}: ${path}`,
        message,
      });
    let reads = 0;
    const read = (program: CelProgram) => {
      for (const name of identifiers((program as { ast?: unknown }).ast)) reads |= readBit(name);
    };
    let when: CelProgram | undefined;
    let celWhen: CelProgram | undefined;
    if (rule.when.trim() !== 'true') {
      const compiled = compileCel(rule.when, 'bool');
      if (compiled.ok) {
        read(compiled.program);
        celWhen = compiled.program;
        const indexed = indexCondition(rule.when, compiled.program, history);
        if (indexed) read(indexed.program);
        const closed = withClosure(compiled.program, CLOSURE_FUNCTIONS) as CelProgram;
        when = indexed
          ? withIndex(closed, {
              ...indexed,
              program: withClosure(indexed.program, INDEXED_CLOSURE_FUNCTIONS) as CelProgram,
            })
          : closed;
      } else problem('when', origin?.when_line, compiled.message);
    }
    let inputExpr: CelProgram | undefined;
    if (rule.input_expr !== undefined) {
      const compiled = compileCel(rule.input_expr, 'map');
      if (compiled.ok) {
        read(compiled.program);
        inputExpr = compiled.program;
      } else problem('input_expr', origin?.input_expr_line, compiled.message);
    }
    rules.push({
      rule,
      index,
      when,
      celWhen,
      input_expr: inputExpr,
      reads,
      types: rule.match?.types ? new Set(rule.match.types) : undefined,
      runtimes: rule.match?.runtimes ? new Set(rule.match.runtimes) : undefined,
      kinds: rule.match?.kinds ? new Set(rule.match.kinds) : undefined,
      origin,
    });
  });

  const schemas = buildToolSchemas(policy.gate.tool_schemas);
  if (!schemas.ok) {
    for (const message of schemas.errors)
      problems.push({ file: 'gate', line: 0, column: 0, path: 'gate', message });
  }
  if (problems.length > 0 || !schemas.ok) return { ok: false, problems };

  const index = indexByTool(rules);
  // By type, then runtime, tool and kind: a lookup builds no key string (a decision used to).
  let cache = new Map<string, Map<string, Map<string, Map<string, readonly CompiledRule[]>>>>();
  let cached = 0;
  const readOnly = toolMatcher(policy.gate.read_only_tools);

  return {
    ok: true,
    compiled: {
      revision: policyRevision(policy),
      options: policy.gate,
      rules,
      toolSchemas: schemas.check,
      history,
      isReadOnly: readOnly,
      candidates(type, runtime, tool, kind = 'other') {
        const hit = cache
          .get(type)
          ?.get(runtime ?? '')
          ?.get(tool)
          ?.get(kind);
        if (hit) return hit;
        const found = index(tool, kind).filter(
          (r) =>
            (!r.types || r.types.has(type)) && (!r.runtimes || (runtime !== null && r.runtimes.has(runtime))),
        );
        found.sort((a, b) => b.rule.priority - a.rule.priority || a.index - b.index);
        if (cached >= CANDIDATE_CACHE_SIZE) {
          cache = new Map();
          cached = 0;
        }
        const byTool = inner(inner(cache, type), runtime ?? '');
        inner(byTool, tool).set(kind, found);
        cached++;
        return found;
      },
    },
  };
}

/**
 * Exact tool names go into a map, globs into a short list, rules matched by kind into a map of their
 * own, rules with neither into a fourth: a decision for tool Y never looks at a rule written for tool X,
 * nor one for `shell` at a rule for `file.read`. A rule with both `tools` and `kinds` needs both.
 */
function indexByTool(rules: readonly CompiledRule[]): (tool: string, kind: string) => CompiledRule[] {
  const exact = new Map<string, CompiledRule[]>();
  const globs: { re: RegExp; rule: CompiledRule }[] = [];
  const byKind = new Map<string, CompiledRule[]>();
  const any: CompiledRule[] = [];
  for (const r of rules) {
    const tools = r.rule.match?.tools;
    if (!tools) {
      if (r.kinds) for (const k of r.kinds) byKind.set(k, [...(byKind.get(k) ?? []), r]);
      else any.push(r);
      continue;
    }
    for (const pattern of new Set(tools)) {
      if (pattern.includes('*')) globs.push({ re: globToRegExp(pattern), rule: r });
      else exact.set(pattern, [...(exact.get(pattern) ?? []), r]);
    }
  }
  return (tool, kind) => {
    const out = new Set<CompiledRule>();
    for (const r of exact.get(tool) ?? []) if (!r.kinds || r.kinds.has(kind)) out.add(r);
    for (const g of globs) if (g.re.test(tool) && (!g.rule.kinds || g.rule.kinds.has(kind))) out.add(g.rule);
    for (const r of byKind.get(kind) ?? []) out.add(r);
    for (const r of any) out.add(r);
    return [...out];
  };
}

export function toolMatcher(patterns: readonly string[]): (tool: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const globs = patterns.filter((p) => p.includes('*')).map(globToRegExp);
  return (tool) => exact.has(tool) || globs.some((re) => re.test(tool));
}

/** `*` is any run of characters; everything else is literal (tool names hold `.`, `__`, `-`). */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map(escapeRegExp).join('.*')}$`, 's');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
