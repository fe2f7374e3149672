import { closureFunctions, withClosure } from '../cel/closures.js';
import { celEnvironment } from '../cel/environment.js';
import type { CelContext, CelProgram } from './cel.js';
import { CEL_FUNCTIONS, CEL_VARIABLES, CLOSURE_FUNCTIONS } from './cel.js';
import type { HistoryEntry } from './types.js';

/**
 * `history.exists(h, …)` answered without walking the history.
 *
 * A condition such as `history.exists(h, h.kind == "web.fetch")` asks the same question of every entry
 * on every decision, though a session's history changes by one entry per decision. At compile time each
 * such call whose predicate reads nothing but `h` (closed) becomes a lookup of a per-window index that
 * keeps, entry by entry, whether the predicate held; a predicate of the form `C(h) && h.field == E` (C
 * closed, `field` one of the entry's string fields, E any expression without `h`) becomes "E is one of
 * the `field` values of the entries where C holds". Each entry is tested once, when it enters the window
 * (HistoryWindow.index). Any other `history.exists` walks as before.
 *
 * Decisions stay identical: a rule runs its rewritten program only when the window is known and no
 * entry made an indexed predicate fail (an error, or a value that is not a bool); otherwise it runs the
 * condition as written. Pinned by history-index.test.ts, which compares both programs over random windows.
 */

/** Entry fields that are always strings: `h.host == args.host` is a set lookup. */
const STRING_FIELDS = new Set(['kind', 'tool', 'decision', 'at', 'host']);
/** Macros whose second argument list starts with the name they bind. */
const BINDING_MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** The hidden variable the rewritten programs read the index through; no user rule can name it. */
export const INDEX_VARIABLE = '__hx';

/** One indexed predicate: `test` of an entry, and for a lookup the field whose values are collected. */
export interface HistoryPredicate {
  test: ((entry: HistoryEntry) => unknown) | undefined;
  field: string | undefined;
}

/** The predicates of one compiled policy, by id; the window keeps one index per table. */
export class HistoryTable {
  readonly predicates: HistoryPredicate[] = [];
  private readonly ids = new Map<string, number>();

  add(key: string, predicate: HistoryPredicate): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.predicates.length;
      this.predicates.push(predicate);
      this.ids.set(key, id);
    }
    return id;
  }
}

/** What CEL reads as `__hx`: `p<id>` a bool (closed), or the values counted with `p<id>_any` (lookup). */
export interface HistoryView {
  [field: string]: unknown;
  /** Per predicate: no entry of the window failed it, so its answer is the walk's answer. */
  clean: boolean[];
}

interface AstNode {
  op: string;
  args: unknown;
  start: number;
  end: number;
}

const isNode = (v: unknown): v is AstNode =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as AstNode).op === 'string';

function children(node: AstNode): AstNode[] {
  const out: AstNode[] = [];
  const visit = (v: unknown) => {
    if (isNode(v)) out.push(v);
    else if (Array.isArray(v)) for (const x of v) visit(x);
  };
  visit(node.args);
  return out;
}

/** Whether `name` appears as an identifier anywhere under `node`. */
function mentions(node: AstNode, name: string): boolean {
  if (node.op === 'id') return node.args === name;
  return children(node).some((c) => mentions(c, name));
}

/** `h.field` for the bound name `h` and a string field of the entry. */
function entryField(node: AstNode, name: string): string | undefined {
  if (node.op !== '.' || !Array.isArray(node.args)) return undefined;
  const [target, field] = node.args as [unknown, unknown];
  if (!isNode(target) || target.op !== 'id' || target.args !== name) return undefined;
  return typeof field === 'string' && STRING_FIELDS.has(field) ? field : undefined;
}

function conjuncts(node: AstNode): AstNode[] {
  if (node.op === '&&' && Array.isArray(node.args)) return (node.args as AstNode[]).flatMap(conjuncts);
  return [node];
}

/** Structure without positions: a slice of the source must parse to the very node it was cut from. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (isNode(v)) return { op: v.op, args: shape(v.args) };
  return typeof v === 'bigint' ? `${v}n` : v;
}

const entryEnvironments = new Map<string, ReturnType<typeof celEnvironment>>();

/** A predicate's source compiled alone, with only the bound name declared: it compiles only when closed. */
function compileClosed(source: string, name: string, node: AstNode): CelProgram | undefined {
  let env = entryEnvironments.get(name);
  if (!env) {
    env = celEnvironment({
      variables: { [name]: 'dyn' },
      mixedLiterals: true,
      functions: CEL_FUNCTIONS as never,
    });
    entryEnvironments.set(name, env);
  }
  const compiled = env.compile<CelProgram & { ast?: unknown }>(source, 'bool');
  if (!compiled.ok || JSON.stringify(shape(compiled.program.ast)) !== JSON.stringify(shape(node)))
    return undefined;
  return compiled.program;
}

const INDEXED_FUNCTIONS = {
  ...CEL_FUNCTIONS,
  // `E in set` would say the same for strings; a function keeps heterogeneous values plainly false.
  '__hxHas(dyn, dyn): bool': (values: ReadonlyMap<string, number>, v: unknown) =>
    typeof v === 'string' && values.has(v),
};
/** The helpers an indexed condition's closure calls directly (src/cel/closures.ts). */
export const INDEXED_CLOSURE_FUNCTIONS = closureFunctions(INDEXED_FUNCTIONS as never);

const indexedEnvironment = celEnvironment({
  variables: { ...CEL_VARIABLES, [INDEX_VARIABLE]: 'map' },
  mixedLiterals: true,
  functions: INDEXED_FUNCTIONS as never,
});

export interface IndexedCondition {
  program: CelProgram;
  /** The predicates the program reads; all must be clean for it to stand in for the original. */
  uses: number[];
}

/**
 * The condition with every indexable `history.exists(h, …)` replaced by a lookup, or undefined when it
 * has none. `program` is the compiled original (its `ast` is cel-js's parse tree).
 */
export function indexCondition(
  source: string,
  program: CelProgram,
  table: HistoryTable,
): IndexedCondition | undefined {
  const ast = (program as { ast?: unknown }).ast;
  if (!isNode(ast)) return undefined;
  const edits: { start: number; end: number; text: string }[] = [];
  const uses: number[] = [];
  const replaced = new Map<AstNode, unknown>();

  const visit = (node: AstNode, bound: ReadonlySet<string>) => {
    if (node.op === 'rcall' && Array.isArray(node.args)) {
      const [method, target, rest] = node.args as [unknown, unknown, unknown];
      if (method === 'exists' && isNode(target) && target.op === 'id' && target.args === 'history') {
        const edit =
          !bound.has('history') && Array.isArray(rest) ? indexExists(rest, node, bound) : undefined;
        const alone = edit
          ? indexedEnvironment.compile<CelProgram & { ast?: unknown }>(edit.edit.text, 'dyn')
          : undefined;
        if (edit && alone?.ok) {
          replaced.set(node, shape(alone.program.ast));
          edits.push(edit.edit);
          uses.push(edit.id);
          return;
        }
      }
      if (typeof method === 'string' && BINDING_MACROS.has(method) && Array.isArray(rest)) {
        const [variable, ...body] = rest as unknown[];
        if (isNode(target)) visit(target, bound);
        const inner = new Set(bound);
        if (isNode(variable) && variable.op === 'id' && typeof variable.args === 'string')
          inner.add(variable.args);
        for (const b of body) if (isNode(b)) visit(b, inner);
        return;
      }
    }
    for (const c of children(node)) visit(c, bound);
  };

  const indexExists = (rest: unknown[], call: AstNode, bound: ReadonlySet<string>) => {
    const [variable, body] = rest as [unknown, unknown];
    if (rest.length !== 2 || !isNode(variable) || variable.op !== 'id' || !isNode(body)) return undefined;
    const name = variable.args as string;
    const slice = (n: AstNode) => source.slice(n.start, n.end);
    const closedCel = compileClosed(slice(body), name, body);
    if (closedCel) {
      // Run once per entry as it joins the window: the closure, cel-js where it is unsure.
      const closed = withClosure(closedCel, CLOSURE_FUNCTIONS) as CelProgram;
      const id = table.add(`closed\u0000${name}\u0000${slice(body)}`, {
        test: (entry) => closed({ [name]: entry } as never),
        field: undefined,
      });
      return { id, edit: { start: call.start, end: call.end, text: `(${INDEX_VARIABLE}.p${id})` } };
    }
    // C(h) && h.field == E: exactly one conjunct compares a string field with an expression free of h.
    const parts = conjuncts(body);
    const open = parts.filter((p) => p.op === '==' && !compileClosed(slice(p), name, p));
    if (open.length !== 1) return undefined;
    const eq = open[0]!;
    const [a, b] = eq.args as [AstNode, AstNode];
    const field = entryField(a, name) ?? entryField(b, name);
    const other = entryField(a, name) ? b : a;
    if (!field || mentions(other, name)) return undefined;
    // E stays where it was, but it is checked alone: a name a macro around the call binds cannot be.
    for (const b of bound) if (mentions(other, b)) return undefined;
    const alone = indexedEnvironment.compile<CelProgram & { ast?: unknown }>(slice(other), 'dyn');
    if (!alone.ok || JSON.stringify(shape(alone.program.ast)) !== JSON.stringify(shape(other)))
      return undefined;
    const rest2 = parts.filter((p) => p !== eq);
    const tests = rest2.map((p) => compileClosed(slice(p), name, p));
    if (tests.some((t) => t === undefined)) return undefined;
    const others = (tests as CelProgram[]).map((t) => withClosure(t, CLOSURE_FUNCTIONS) as CelProgram);
    const test =
      others.length === 0
        ? undefined
        : (entry: HistoryEntry) => {
            // CEL's && is commutative over errors; the index treats any failure as "walk instead".
            for (const t of others) {
              const v = t({ [name]: entry } as never);
              if (v !== true) return v;
            }
            return true;
          };
    const key = `lookup\u0000${name}\u0000${field}\u0000${rest2.map(slice).join('\u0000')}`;
    const id = table.add(key, { test, field });
    const text = `(${INDEX_VARIABLE}.p${id}_any && __hxHas(${INDEX_VARIABLE}.p${id}, ${slice(other)}))`;
    return { id, edit: { start: call.start, end: call.end, text } };
  };

  visit(ast, new Set());
  if (edits.length === 0) return undefined;
  edits.sort((x, y) => y.start - x.start);
  let text = source;
  for (const e of edits) text = text.slice(0, e.start) + e.text + text.slice(e.end);
  const compiled = indexedEnvironment.compile<CelProgram & { ast?: unknown }>(text, 'bool');
  if (!compiled.ok) return undefined;
  // The rewrite must be the original with each replaced call, and nothing else, changed.
  const expected = (v: unknown): unknown => {
    const r = isNode(v) ? replaced.get(v) : undefined;
    if (r !== undefined) return r;
    if (Array.isArray(v)) return v.map(expected);
    if (isNode(v)) return { op: v.op, args: expected(v.args) };
    return shape(v);
  };
  if (JSON.stringify(shape(compiled.program.ast)) !== JSON.stringify(expected(ast))) return undefined;
  return { program: compiled.program, uses };
}

/** The rule's condition: the indexed program when the window's index can answer, else the original. */
export function withIndex(original: CelProgram, indexed: IndexedCondition): CelProgram {
  const { program, uses } = indexed;
  return (c: CelContext) => {
    const view = (c as { [INDEX_VARIABLE]?: HistoryView })[INDEX_VARIABLE];
    if (!view) return original(c);
    for (const id of uses) if (!view.clean[id]) return original(c);
    return program(c);
  };
}

/** A failed predicate: its entry makes the walk's answer the only safe one. */
const FAILED = Symbol('failed');
type Outcome = boolean | string | typeof FAILED;

/**
 * One window's answers for one table, kept as entries come and go: per predicate, each entry's outcome
 * (ring by entry number), how many held, how many failed, and for a lookup the count of each value.
 */
export class WindowIndex {
  /** Entry numbers [first, synced) are counted. */
  private first = 0;
  private synced = 0;
  private readonly outcomes: Outcome[][];
  private readonly held: number[];
  private readonly failed: number[];
  private readonly values: Map<string, number>[];
  private view: HistoryView | undefined;

  constructor(
    private readonly table: HistoryTable,
    private readonly capacity: number,
  ) {
    const n = table.predicates.length;
    this.outcomes = Array.from({ length: n }, (): Outcome[] => []);
    this.held = new Array<number>(n).fill(0);
    this.failed = new Array<number>(n).fill(0);
    this.values = Array.from({ length: n }, () => new Map());
  }

  /**
   * Brings the index up to the window: `entries` are the newest `entries.length` of the `pushed`
   * entries ever pushed (at most `capacity`). Entries that left are uncounted first, while their slots
   * of the ring still hold their outcomes; then each new entry is tested once.
   */
  sync(entries: readonly HistoryEntry[], pushed: number): HistoryView {
    if (this.view && this.synced === pushed) return this.view;
    const first = pushed - entries.length;
    for (let seq = this.first; seq < Math.min(first, this.synced); seq++) this.count(seq, -1);
    for (let seq = Math.max(this.synced, first); seq < pushed; seq++) {
      const entry = entries[seq - first]!;
      for (let id = 0; id < this.outcomes.length; id++)
        this.outcomes[id]![seq % this.capacity] = outcomeOf(this.table.predicates[id]!, entry);
      this.count(seq, 1);
    }
    this.first = first;
    this.synced = pushed;
    const view: HistoryView = { clean: [] };
    this.table.predicates.forEach((p, id) => {
      view.clean[id] = this.failed[id] === 0;
      if (p.field === undefined) view[`p${id}`] = this.held[id]! > 0;
      else {
        view[`p${id}`] = this.values[id];
        view[`p${id}_any`] = this.held[id]! > 0;
      }
    });
    this.view = view;
    return view;
  }

  private count(seq: number, by: 1 | -1): void {
    const slot = seq % this.capacity;
    for (let id = 0; id < this.outcomes.length; id++) {
      const o = this.outcomes[id]![slot];
      if (o === FAILED) this.failed[id]! += by;
      else if (o === true) this.held[id]! += by;
      else if (typeof o === 'string') {
        this.held[id]! += by;
        const n = (this.values[id]!.get(o) ?? 0) + by;
        if (n > 0) this.values[id]!.set(o, n);
        else this.values[id]!.delete(o);
      }
    }
  }
}

function outcomeOf(p: HistoryPredicate, entry: HistoryEntry): Outcome {
  let ok: unknown;
  try {
    ok = p.test ? p.test(entry) : true;
  } catch {
    return FAILED;
  }
  if (ok === false) return false;
  if (ok !== true) return FAILED;
  if (p.field === undefined) return true;
  const v = (entry as unknown as Record<string, unknown>)[p.field];
  return typeof v === 'string' ? v : FAILED;
}
