import { Environment } from '@marcbachmann/cel-js';

/**
 * The one way Switchboard builds a CEL environment: the gate's rules, ingress triggers and notify
 * routes each declare their variables here and get the same parse, type-check and error wording.
 * Variables are declared, never dynamic, so a typo such as `tol == "Bash"` fails at load instead of
 * on every call. No context registers functions of its own: what CEL itself offers is what a rule has.
 */

/** CEL type names by variable (`string`, `map`, `dyn`, `google.protobuf.Timestamp`, …). */
export type CelVariables = Readonly<Record<string, string>>;

/** What an expression must give. `dyn` always passes the check and is looked at when it runs. */
export type CelExpect = 'bool' | 'map' | 'string';

export type CelCompiled<P> = { ok: true; program: P } | { ok: false; message: string };

export interface CelEnvironmentSpec {
  variables: CelVariables;
  /**
   * Allow list and map literals whose elements differ in type (`{"command": input.command,
   * "timeout": 30}`), ordinary in a gate `input_expr` or a trigger. Routes compare strings only and
   * keep CEL's default, which refuses them.
   */
  mixedLiterals?: boolean;
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
    for (const [name, type] of Object.entries(spec.variables)) e = e.registerVariable(name, type);
    env = e;
    return e;
  };
  return {
    compile<P>(expression: string, expect: CelExpect): CelCompiled<P> {
      try {
        const parsed = environment().parse(expression);
        const checked = parsed.check();
        if (!checked.valid) return { ok: false, message: celMessage(checked.error) };
        const type = checked.type ?? 'dyn';
        const fits = type === 'dyn' || type === expect || (expect === 'map' && type.startsWith('map'));
        if (!fits) return { ok: false, message: `the expression gives ${type}, not ${expect}` };
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
