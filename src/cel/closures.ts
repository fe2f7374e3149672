import {
  type ClosureFunction,
  HELPERS,
  isPrimitive,
  PARAM_TYPES,
  type ParamType,
  UNSURE,
} from './closure-values.js';

export { type ClosureFunction, UNSURE } from './closure-values.js';

/**
 * A checked CEL expression as a plain JS closure, for the shapes rules are made of (issue 17's
 * decision figure: cel-js's tree walk, with a RootContext and a type dispatch per node, was ~60 % of
 * a decision).
 *
 * The closure answers only where it knows cel-js's answer: strings, bools, ints (BigInt), doubles,
 * null, lists (Array) and maps (plain objects, Map), compared, combined and read the way cel-js 8
 * does. Anywhere else (a missing key, an operand of another type, an overflow, an invalid pattern,
 * a value it does not model) it gives up with UNSURE and the caller runs cel-js on the same context
 * (`orCel`), so errors and their messages are always cel-js's own. An expression with any node it
 * does not compile (timestamps, map literals, indexing, `size` of a string, most functions) gets no
 * closure at all. Pinned by closures.test.ts, which runs both over the rule corpus and random contexts.
 *
 * This reads cel-js's checked tree (`{ op, args, checkedType, meta }`; a macro keeps its expansion in
 * `meta.alternate`, `has()` its field chain in `meta.macro.macroHasProps`), like patterns.ts.
 */

interface Node {
  op: string;
  args: unknown;
  checkedType?: { name?: string };
  meta?: { alternate?: Node; macro?: { macroHasProps?: Node[] } };
}

class Unsupported extends Error {}
const unsupported = (): never => {
  throw new Unsupported();
};

/** Inline JS that tests `v` against a declared or iteration type; undefined for a type not modelled. */
function typeTest(name: string | undefined, v: string): string | undefined {
  if (name === undefined) return undefined;
  if (name === 'dyn') return `plainValue(${v})`;
  if (name === 'string') return `typeof ${v} === 'string'`;
  if (name === 'bool') return `typeof ${v} === 'boolean'`;
  if (name === 'int') return `typeof ${v} === 'bigint'`;
  if (name === 'double') return `typeof ${v} === 'number'`;
  if (name.startsWith('map<')) return `isMap(${v})`;
  if (name.startsWith('list<')) return `(Array.isArray(${v}) || ${v} instanceof Set)`;
  return undefined;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The closure of a checked expression, or undefined when it holds a node this does not model.
 * `functions`: the helpers of the environment it may call directly, by name.
 *
 * It is generated JS, one function per expression, so each rule's property reads get their own
 * inline caches (a tree of small closures shares one call site per node kind, and measured only
 * 1.5× cel-js). Nothing of the expression's text becomes code: literals, field and variable names
 * and patterns are passed in as constants (`K[i]`); the code is made of this file's templates only.
 * Every step that cannot be sure runs the current "unsure" statement: `return U` (run cel-js), or
 * inside `exists`/`all`, skip the element as cel-js skips one whose predicate errs.
 */
export function celClosure(
  ast: unknown,
  functions: Readonly<Record<string, ClosureFunction>> = {},
): ((ctx: Record<string, unknown>) => unknown) | undefined {
  const constants: unknown[] = [];
  let lines: string[] = [];
  let temps = 0;
  let unsure = 'return U;';
  const constant = (v: unknown) => `K[${constants.push(v) - 1}]`;
  const temp = () => `t${temps++}`;
  const emit = (line: string) => lines.push(line);
  /** The statements `body` emits, as a block of their own. */
  const block = (body: () => void): string => {
    const outer = lines;
    lines = [];
    body();
    const inner = lines.join('\n');
    lines = outer;
    return inner;
  };
  type Scope = ReadonlyMap<string, string>;

  /** Emits the statements of `node` and returns a JS expression holding its (sure) value. */
  const compile = (node: Node, scope: Scope): string => {
    const args = node.args;
    switch (node.op) {
      case 'value':
        return isPrimitive(args) ? constant(args) : unsupported();
      case 'id': {
        if (node.meta?.alternate) return unsupported();
        const name = args as string;
        const bound = scope.get(name);
        if (bound !== undefined) return bound;
        const t = temp();
        const test = typeTest(node.checkedType?.name, t);
        if (!test || !IDENTIFIER.test(name)) return unsupported();
        emit(`const ${t} = ctx.${name};`);
        emit(`if (${t} === undefined || !(${test})) ${unsure}`);
        return t;
      }
      case '.': {
        const [target, key] = args as [Node, string];
        const left = target.checkedType?.name;
        if (left !== 'dyn' && left !== 'map<dyn, dyn>') return unsupported();
        const o = compile(target, scope);
        const t = temp();
        emit(`const ${t} = field(${o}, ${constant(key)});`);
        emit(`if (${t} === U) ${unsure}`);
        return t;
      }
      case '==':
      case '!=': {
        const [l, r] = args as [Node, Node];
        const a = compile(l, scope);
        const b = compile(r, scope);
        const t = temp();
        emit(
          `const ${t} = typeof ${a} === 'string' && typeof ${b} === 'string' ? ${a} === ${b} : equals(${a}, ${b});`,
        );
        emit(`if (${t} === U) ${unsure}`);
        return node.op === '!=' ? `!${t}` : t;
      }
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const [l, r] = args as [Node, Node];
        const a = compile(l, scope);
        const b = compile(r, scope);
        emit(`if (!orderable(${a}, ${b})) ${unsure}`);
        const t = temp();
        emit(`const ${t} = ${a} ${node.op} ${b};`);
        return t;
      }
      case '+':
      case '-': {
        const [l, r] = args as [Node, Node];
        const a = compile(l, scope);
        const b = compile(r, scope);
        const t = temp();
        emit(`const ${t} = arith(${a}, ${b}, ${node.op === '-'});`);
        emit(`if (${t} === U) ${unsure}`);
        return t;
      }
      case '-_': {
        const v = compile(args as Node, scope);
        emit(`if (typeof ${v} !== 'bigint' && typeof ${v} !== 'number') ${unsure}`);
        return `(-${v})`;
      }
      case '!_': {
        const v = compile(args as Node, scope);
        emit(`if (typeof ${v} !== 'boolean') ${unsure}`);
        return `!${v}`;
      }
      case '&&':
      case '||': {
        // cel-js's && and || absorb an error on one side when the other decides; this does not
        // try: an unsure side makes the whole answer unsure, and cel-js decides it.
        const [l, r] = args as [Node, Node];
        const decides = node.op === '||';
        const a = compile(l, scope);
        const t = temp();
        emit(`let ${t} = ${decides};`);
        emit(`if (${a} !== ${decides}) {`);
        emit(`if (${a} !== ${!decides}) ${unsure}`);
        emit(
          block(() => {
            const b = compile(r, scope);
            emit(`if (typeof ${b} !== 'boolean') ${unsure}`);
            emit(`${t} = ${b};`);
          }),
        );
        emit('}');
        return t;
      }
      case '?:': {
        const [c, x, y] = args as [Node, Node, Node];
        const v = compile(c, scope);
        const t = temp();
        emit(`let ${t};`);
        emit(`if (${v} === true) {`);
        emit(block(() => emit(`${t} = ${compile(x, scope)};`)));
        emit(`} else if (${v} === false) {`);
        emit(block(() => emit(`${t} = ${compile(y, scope)};`)));
        emit(`} else ${unsure}`);
        return t;
      }
      case 'in': {
        const [l, r] = args as [Node, Node];
        const a = compile(l, scope);
        const b = compile(r, scope);
        const t = temp();
        emit(`const ${t} = contains(${a}, ${b});`);
        emit(`if (${t} === U) ${unsure}`);
        return t;
      }
      case 'list': {
        const items = args as Node[];
        // A list of literals is built once; nothing the code does writes to it.
        if (items.every((n) => n.op === 'value' && isPrimitive(n.args)))
          return constant(Object.freeze(items.map((n) => n.args)));
        const values = items.map((n) => compile(n, scope));
        const t = temp();
        emit(`const ${t} = [${values.join(', ')}];`);
        return t;
      }
      case 'rcall':
        return compileMethod(node, scope);
      case 'call':
        return compileCall(node, scope);
      default:
        return unsupported();
    }
  };

  const compileMethod = (node: Node, scope: Scope): string => {
    const [method, receiver, params] = node.args as [string, Node, Node[]];
    const alternate = node.meta?.alternate as
      | (Node & { args: { kind?: string; iterCtx?: { iterType?: { name?: string } } } })
      | undefined;
    if (alternate) {
      if (alternate.op !== 'comprehension' || alternate.args.kind !== 'quantifier') return unsupported();
      if ((method !== 'exists' && method !== 'all') || params.length !== 2) return unsupported();
      return quantifier(method, receiver, params, alternate.args.iterCtx?.iterType?.name, scope);
    }
    const string = { contains: 'includes', startsWith: 'startsWith', endsWith: 'endsWith' }[method];
    if (params.length === 1 && (string || method === 'matches')) {
      const a = compile(receiver, scope);
      const param = params[0]!;
      const t = temp();
      if (method === 'matches' && param.op === 'value' && typeof param.args === 'string') {
        // A literal pattern compiled here; an invalid one is left to cel-js, which reports it.
        let re: RegExp | undefined;
        try {
          re = new RegExp(param.args);
        } catch {
          return unsupported();
        }
        emit(`if (typeof ${a} !== 'string') ${unsure}`);
        emit(`const ${t} = ${constant(re)}.test(${a});`);
        return t;
      }
      const b = compile(param, scope);
      emit(`if (typeof ${a} !== 'string' || typeof ${b} !== 'string') ${unsure}`);
      if (string) emit(`const ${t} = ${a}.${string}(${b});`);
      else {
        emit(`const ${t} = matches(${a}, ${b});`);
        emit(`if (${t} === U) ${unsure}`);
      }
      return t;
    }
    if (method === 'size' && params.length === 0) {
      const a = compile(receiver, scope);
      // On a dynamic receiver cel-js probes its first element's type first (probeOk).
      emit(`if (!Array.isArray(${a}) || !probeOk(${a})) ${unsure}`);
      return `BigInt(${a}.length)`;
    }
    return unsupported();
  };

  /**
   * `list.exists(x, P)` / `list.all(x, P)` over an Array, as cel-js runs them: elements in order,
   * an element whose P errs is skipped and the first decisive one answers; none decisive and one
   * erred, the error stands. Here an unsure element is skipped the same way: a decisive element
   * after it answers whatever that one would have given; with none, the answer is cel-js's.
   */
  const quantifier = (
    method: 'exists' | 'all',
    receiver: Node,
    params: Node[],
    iterType: string | undefined,
    scope: Scope,
  ): string => {
    const [variable, predicate] = params as [Node, Node];
    if (variable.op !== 'id' || typeof variable.args !== 'string') return unsupported();
    const items = compile(receiver, scope);
    const n = temps++;
    const [item, index, decided, skipped, loop] = ['s', 'i', 'd', 'u', 'loop'].map((p) => `${p}${n}`) as [
      string,
      string,
      string,
      string,
      string,
    ];
    // cel-js checks each element against the iteration type outside the error absorption.
    const test = typeTest(iterType, item);
    if (!test) return unsupported();
    const decisive = method === 'exists';
    emit(`if (!Array.isArray(${items})) ${unsure}`);
    emit(`let ${decided} = false;`);
    emit(`let ${skipped} = false;`);
    emit(`${loop}: for (let ${index} = 0; ${index} < ${items}.length; ${index}++) {`);
    emit(`const ${item} = ${items}[${index}];`);
    emit(`if (!(${test})) ${unsure}`);
    const outer = unsure;
    unsure = `{ ${skipped} = true; continue ${loop}; }`;
    const inner = new Map(scope);
    inner.set(variable.args, item);
    emit(
      block(() => {
        const v = compile(predicate, inner);
        emit(`if (${v} === ${decisive}) { ${decided} = true; break ${loop}; }`);
        emit(`if (${v} !== ${!decisive}) ${skipped} = true;`);
      }),
    );
    unsure = outer;
    emit('}');
    emit(`if (!${decided} && ${skipped}) ${unsure}`);
    return decisive ? decided : `!${decided}`;
  };

  const compileCall = (node: Node, scope: Scope): string => {
    const [name, params] = node.args as [string, Node[]];
    const props = node.meta?.macro?.macroHasProps;
    const t = temp();
    if (name === 'has' && props) {
      if (props.some((p, i) => i < props.length - 1 && p.op !== '.')) return unsupported();
      const keys = props
        .slice(0, -1)
        .map((p) => (p.args as [Node, string])[1])
        .reverse();
      const base = compile(props[props.length - 1]!, scope);
      emit(`const ${t} = hasChain(${base}, ${constant(keys)});`);
      emit(`if (${t} === U) ${unsure}`);
      return t;
    }
    const overloads = (Object.hasOwn(functions, name) ? functions[name] : undefined)?.filter(
      (o) => o.params.length === params.length,
    );
    if (!overloads || overloads.length === 0) return unsupported();
    const values = params.map((p) => compile(p, scope));
    emit(`const ${t} = call(${constant(overloads)}, [${values.join(', ')}]);`);
    emit(`if (${t} === U) ${unsure}`);
    return t;
  };

  let result: string;
  try {
    result = compile(ast as Node, new Map());
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  const helpers = Object.keys(HELPERS).join(', ');
  const source = `const { ${helpers} } = H;\nreturn function celClosure(ctx) {\n${lines.join('\n')}\nreturn ${result};\n};`;
  try {
    return new Function('K', 'H', source)(constants, HELPERS) as (ctx: Record<string, unknown>) => unknown;
  } catch {
    // Code generation refused (`--disallow-code-generation-from-strings`): cel-js runs it all.
    return undefined;
  }
}

/** The closure where it is sure, cel-js (`program`) where it is not: the same answers, errors included. */
export function orCel<C>(closure: (ctx: C) => unknown, program: (ctx: C) => unknown): (ctx: C) => unknown {
  return (ctx) => {
    // cel-js takes no context as no variables; the closure reads fields of one.
    if (typeof ctx !== 'object' || ctx === null) return program(ctx);
    let v: unknown;
    try {
      v = closure(ctx);
    } catch {
      // Not expected (every step is guarded), but never the closure's error: cel-js's answer.
      v = UNSURE;
    }
    return v === UNSURE ? program(ctx) : v;
  };
}

/**
 * The helpers of an environment (`name(type, …): result` signatures, as celEnvironment takes them)
 * that a closure may call: those whose every parameter is `string`, `bool`, `int`, `map`, `list` or
 * `dyn` (element and key types are not checked, so `list<string>` and the like are left to cel-js).
 */
export function closureFunctions(
  functions: Readonly<Record<string, (...args: never[]) => unknown>>,
): Record<string, ClosureFunction> {
  const byName = new Map<string, { params: ParamType[]; fn: (...args: never[]) => unknown }[] | null>();
  for (const [signature, fn] of Object.entries(functions)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\(([^)]*)\)/.exec(signature);
    if (!m) continue;
    const name = m[1]!;
    const params = m[2]!.trim() === '' ? [] : m[2]!.split(',').map((p) => p.trim());
    const known = byName.get(name);
    if (known === null) continue;
    if (!params.every((p) => PARAM_TYPES.has(p))) byName.set(name, null);
    else byName.set(name, [...(known ?? []), { params: params as ParamType[], fn }]);
  }
  const out: Record<string, ClosureFunction> = {};
  for (const [name, f] of byName) if (f) out[name] = f;
  return out;
}

/** A checked cel-js program with its closure in front where there is one (`celClosure`, `orCel`). */
export function withClosure<C>(
  program: (ctx: C) => unknown,
  functions: Readonly<Record<string, ClosureFunction>> = {},
): (ctx: C) => unknown {
  const closure = celClosure((program as { ast?: unknown }).ast, functions);
  return closure ? orCel(closure as (ctx: C) => unknown, program) : program;
}
