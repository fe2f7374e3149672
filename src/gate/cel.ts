import { type CelCompiled as Compiled, celEnvironment } from '../cel/environment.js';

/**
 * The variables a rule's `when` (and a modify rule's `input_expr`) can read. Declared, not dynamic,
 * so a typo such as `tol == "Bash"` is a lint error instead of a rule that errors on every call.
 */
export const CEL_VARIABLES = {
  tool: 'string',
  input: 'map',
  action: 'dyn',
  resource: 'dyn',
  runtime: 'dyn',
  task: 'map',
  envelope: 'map',
  budgets: 'map',
  now: 'google.protobuf.Timestamp',
} as const;

export type CelVariable = keyof typeof CEL_VARIABLES;
export type CelContext = Record<CelVariable, unknown>;
export type CelProgram = (context: CelContext) => unknown;
export type CelCompiled = Compiled<CelProgram>;

/** Mixed literals such as {"command": input.command, "timeout": 30} are ordinary in input_expr. */
const environment = celEnvironment({ variables: CEL_VARIABLES, mixedLiterals: true });

/** Parses and type-checks once; `expect` is what the value must be (`bool` for when, `map` for input). */
export function compileCel(expression: string, expect: 'bool' | 'map'): CelCompiled {
  return environment.compile<CelProgram>(expression, expect);
}
