import { Environment } from '@marcbachmann/cel-js';
import { keepPatterns } from './patterns.js';

/**
 * The one way Switchboard builds a CEL environment: the gate's rules, ingress triggers and notify
 * routes each declare their variables here and get the same parse, type-check and error wording.
 * Variables are declared, never dynamic, so a typo such as `tol == "Bash"` fails at load instead of
 * on every call. A context may add a few documented helpers (`functions`) and a typed variable with
 * its own operators (`types`, `operators`: the trigger's `event`, which compares as its name); a type
 * error names the variable, its type and the fix (`hints`).
 */

/** CEL type names by variable (`string`, `map`, `dyn`, `google.protobuf.Timestamp`, …). */
export type CelVariables = Readonly<Record<string, string>>;

/** What an expression must give. `dyn` always passes the check and is looked at when it runs. */
export type CelExpect = 'bool' | 'map' | 'string' | 'dyn';

export type CelCompiled<P> = { ok: true; program: P } | { ok: false; message: string };

export interface CelEnvironmentSpec {
  variables: CelVariables;
  /**
   * Allow list and map literals whose elements differ in type (`{"command": input.command,
   * "timeout": 30}`), ordinary in a gate `input_expr` or a trigger. Routes compare strings only and
   * keep CEL's default, which refuses them.
   */
  mixedLiterals?: boolean;
  /** Helpers by signature (`hasFlag(list, string): bool`), documented where the context is. */
  functions?: Readonly<Record<string, (...args: never[]) => unknown>>;
  /** Object types by name, with their fields' CEL types; a variable may be declared of one. */
  types?: Readonly<
    Record<string, { ctor: new (...args: never[]) => object; fields: Record<string, string> }>
  >;
  /** Operators by signature (`TriggerEvent == string`); `==` also gives `!=` and the swapped form. */
  operators?: Readonly<Record<string, (a: never, b: never) => unknown>>;
  /** What to write instead, by variable, for a type error that involves it. */
  hints?: Readonly<Record<string, string>>;
}

export interface CelEnvironment {
  /**
   * Parses and type-checks once. `P` is the caller's program signature: cel-js's parsed expression is
   * a function of the variables.
   */
  compile<P>(expression: string, expect: CelExpect): CelCompiled<P>;
}

/** Built on the first compile and shared by every expression: building is the expensive part. */
export function celEnvironment(spec: CelEnvironmentSpec): CelEnvironment {
  let env: Environment | undefined;
  const environment = (): Environment => {
    if (env) return env;
    let e = spec.mixedLiterals ? new Environment({ homogeneousAggregateLiterals: false }) : new Environment();
    for (const [name, t] of Object.entries(spec.types ?? {}))
      e = e.registerType(name, { ctor: t.ctor as never, fields: t.fields });
    for (const [name, type] of Object.entries(spec.variables)) e = e.registerVariable(name, type);
    for (const [signature, handler] of Object.entries(spec.functions ?? {}))
      e = e.registerFunction(signature, handler as never);
    for (const [signature, handler] of Object.entries(spec.operators ?? {}))
      e = e.registerOperator(signature, handler as never);
    env = e;
    return e;
  };
  return {
    compile<P>(expression: string, expect: CelExpect): CelCompiled<P> {
      try {
        const parsed = environment().parse(expression);
        const checked = parsed.check();
        if (!checked.valid) return { ok: false, message: explainTypeError(checked.error, spec) };
        const type = checked.type ?? 'dyn';
        const fits =
          type === 'dyn' ||
          expect === 'dyn' ||
          type === expect ||
          (expect === 'map' && type.startsWith('map'));
        if (!fits) return { ok: false, message: `the expression gives ${type}, not ${expect}` };
        // Checked once here: each `matches` call keeps its compiled pattern (patterns.ts).
        keepPatterns(parsed.ast);
        return { ok: true, program: parsed as unknown as P };
      } catch (err) {
        return { ok: false, message: celMessage(err) };
      }
    },
  };
}

/** The first line of a CEL error: the rest is a source excerpt that the lint output shows its own way. */
export function celMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}

interface AstNode {
  op?: string;
  args?: unknown;
}

/**
 * A type error in words a rule's author can act on: the variables the failing operation reads, the
 * type each is declared with, and the context's hint for it, after CEL's own first line
 * (`no such overload: map<dyn, dyn> == string`). Pinned by environment.test.ts.
 */
export function explainTypeError(
  err: unknown,
  spec: Pick<CelEnvironmentSpec, 'variables' | 'hints'>,
): string {
  const base = celMessage(err);
  const node = (err as { node?: AstNode } | null)?.node;
  const names = node ? variablesIn(node, 3) : [];
  const known = [...new Set(names)].filter((n) => Object.hasOwn(spec.variables, n));
  if (known.length === 0) return base;
  const parts = known.map((name) => {
    const hint = spec.hints?.[name];
    const what = `\`${name}\` is ${article(spec.variables[name]!)}`;
    return hint ? `${what}: ${hint}` : `${what}; use one of its fields or convert it, e.g. string(${name}.…)`;
  });
  return `${base} (${parts.join('; ')})`;
}

function variablesIn(node: AstNode, depth: number): string[] {
  if (node.op === 'id' && typeof node.args === 'string') return [node.args];
  if (depth === 0) return [];
  const args = Array.isArray(node.args)
    ? node.args
    : node.args && typeof node.args === 'object'
      ? [node.args]
      : [];
  // Only the operands of the failing operation itself and of a field access on them: `event.name`
  // in `event.name + 1` is the variable read, so `event` is named.
  return args.flatMap((a: unknown) =>
    a && typeof a === 'object' ? variablesIn(a as AstNode, depth - 1) : [],
  );
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
