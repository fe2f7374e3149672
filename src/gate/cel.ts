import { closureFunctions } from '../cel/closures.js';
import { type CelCompiled as Compiled, celEnvironment } from '../cel/environment.js';
import { hostOf } from './args.js';
import { hasFlag, parseShell } from './shell.js';

/**
 * The variables a rule's `when` (and a modify rule's `input_expr`) can read. Declared, not dynamic,
 * so a typo such as `tol == "Bash"` is a lint error instead of a rule that errors on every call.
 */
export const CEL_VARIABLES = {
  tool: 'string',
  input: 'map',
  kind: 'string',
  args: 'map',
  history: 'list',
  session: 'map',
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

/** A command of `args.commands` (a map) or any list of words. */
function wordsOf(value: unknown): string[] {
  const words = Array.isArray(value) ? value : (value as { argv?: unknown } | null)?.argv;
  return Array.isArray(words) ? words.filter((w): w is string => typeof w === 'string') : [];
}

/**
 * The helpers rules get for shell commands and URLs (docs/policy.md, "Helpers"). Each is total: a
 * value of the wrong shape gives false or an empty result, never an error.
 */
export const CEL_FUNCTIONS = {
  'hasFlag(map, string): bool': (command: unknown, flag: string) => hasFlag(wordsOf(command).slice(1), flag),
  'hasFlag(list, string): bool': (words: unknown, flag: string) => hasFlag(wordsOf(words), flag),
  'shellSplit(string): list<string>': (text: string) => parseShell(text).argv,
  'shellCommands(string): list': (text: string) => parseShell(text).commands,
  'urlHost(string): string': (url: string) => hostOf(url),
  'basename(string): string': (path: string) => {
    const trimmed = path.replace(/[/\\]+$/, '');
    return trimmed.slice(Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\')) + 1);
  },
} as const;

/** The helpers a rule's closure calls directly (src/cel/closures.ts): those with one simple signature. */
export const CLOSURE_FUNCTIONS = closureFunctions(CEL_FUNCTIONS as never);

/** What a type error about each variable should say to write instead (src/cel/environment.ts). */
const HINTS: Record<string, string> = {
  input: 'read a field of the tool input, e.g. input.command.contains("…")',
  args: 'read a canonical field, e.g. args.command, args.path, args.url, args.commands',
  history: 'test its entries, e.g. history.exists(h, h.kind == "web.fetch")',
  session:
    'read session.untrusted (a bool), or ask "web.fetch" in session.kinds, ".env" in session.files, args.host in session.hosts',
  task: 'read task.steps, task.owner, task.id or task.wall_time_seconds',
  envelope: 'read a field, e.g. envelope.type',
  kind: 'compare it with a kind name, e.g. kind == "shell"',
  tool: 'compare it with a tool name, e.g. tool == "Bash"',
  budgets: 'read a counter, e.g. budgets.steps_left > 0 (has(budgets.steps_left) when it may be absent)',
  now: 'compare a part of it, e.g. now.getHours("Europe/Berlin") < 18, or with timestamp("2026-01-01T00:00:00Z")',
  runtime: 'compare it with a runtime name, e.g. runtime == "codex" (it is null for an API intent)',
  action: 'compare it with a string, e.g. action == "deploy" (it is null when the intent has none)',
  resource: 'compare it with a string, e.g. resource.startsWith("prod/") (null when the intent has none)',
};

/** Mixed literals such as {"command": input.command, "timeout": 30} are ordinary in input_expr. */
const environment = celEnvironment({
  variables: CEL_VARIABLES,
  mixedLiterals: true,
  functions: CEL_FUNCTIONS as never,
  hints: HINTS,
});

/** Parses and type-checks once; `expect` is what the value must be (`bool` for when, `map` for input). */
export function compileCel(expression: string, expect: 'bool' | 'map'): CelCompiled {
  return environment.compile<CelProgram>(expression, expect);
}
