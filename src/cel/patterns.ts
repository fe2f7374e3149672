import { type CelNode, eachNode } from './ast.js';

/**
 * `matches` with its patterns compiled once (issue 17's decision figure).
 *
 * cel-js's `string.matches(string)` is `new RegExp(pattern).test(text)`, so a rule such as
 * `input.command.matches("^curl.*-v2$")` compiles its pattern on every decision: in the gate bench a
 * third of the shell rules do, and the compile was the largest single cost of a decision. A RegExp
 * without flags keeps no state between tests (no `lastIndex`), so one compiled object answers every
 * call. An invalid pattern is never kept: the call goes to cel-js, which reports it as before.
 *
 * This reaches into cel-js's checked tree: a call node is `{ op: 'rcall', args: [method, receiver,
 * args] }` and evaluates through its `handle(values, evaluator, node)`. patterns.test.ts pins both the
 * rewrite (a cel-js release that renames them makes it fail) and the results, errors included.
 */

/** Distinct patterns kept compiled; rules hold a few hundred, a pattern built at run time may be new each call. */
export const PATTERN_CACHE_SIZE = 1_024;

const compiled = new Map<string, RegExp>();

/** `new RegExp(pattern)`, kept; throws as the constructor does for an invalid pattern, and keeps nothing then. */
export function compiledPattern(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (re === undefined) {
    re = new RegExp(pattern);
    if (compiled.size >= PATTERN_CACHE_SIZE) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** A call node: `{ op: 'rcall', args: [method, receiver, args] }`, evaluated by its `handle`. */
interface CallNode extends CelNode {
  handle?: Handle;
}

type Handle = (values: unknown[], evaluator: unknown, node: CelNode) => unknown;

/**
 * Gives every `text.matches(pattern)` call of a checked expression the kept patterns; returns how many
 * calls it found. With a string on both sides cel-js calls its one `string.matches(string)` (the
 * registry refuses an overlapping overload); any other operand goes to cel-js's own dispatch.
 */
export function keepPatterns(ast: unknown): number {
  let calls = 0;
  eachNode(ast, (node) => {
    if (!isMatchesCall(node)) return;
    keep(node);
    calls++;
  });
  return calls;
}

function isMatchesCall(node: CallNode): boolean {
  if (node.op !== 'rcall' || typeof node.handle !== 'function' || !Array.isArray(node.args)) return false;
  const [method, , args] = node.args as [unknown, unknown, unknown];
  return method === 'matches' && Array.isArray(args) && args.length === 1;
}

function keep(node: CallNode): void {
  const celJs = node.handle as Handle;
  node.handle = function keptPattern(values, evaluator, self) {
    const [text, pattern] = values;
    if (typeof text !== 'string' || typeof pattern !== 'string') return celJs(values, evaluator, self);
    let re: RegExp;
    try {
      re = compiledPattern(pattern);
    } catch {
      return celJs(values, evaluator, self);
    }
    return re.test(text);
  };
}
