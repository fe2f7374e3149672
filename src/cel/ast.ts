/**
 * A walk over cel-js's checked tree. Nodes are `{ op, args }`; `args` holds child nodes, lists of
 * them, or (for a comprehension) a plain object of them, and a macro call keeps its expansion in
 * `meta.alternate` / `meta.macro`. Pinned by the tests of its users (patterns.test.ts,
 * src/gate/evaluate.test.ts).
 */
export interface CelNode {
  op: string;
  args: unknown;
  meta?: { alternate?: unknown; macro?: { args?: unknown } };
}

const isNode = (v: unknown): v is CelNode =>
  typeof v === 'object' && v !== null && typeof (v as CelNode).op === 'string';

/** Calls `visit` once for every node reachable from `ast`, the expansions of macros included. */
export function eachNode(ast: unknown, visit: (node: CelNode) => void): void {
  const seen = new Set<object>();
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (!isNode(v)) {
      for (const x of Object.values(v)) walk(x);
      return;
    }
    visit(v);
    walk(v.args);
    walk(v.meta?.alternate);
    walk(v.meta?.macro?.args);
  };
  walk(ast);
}

/** The identifiers an expression names: its variables, and the names its macros bind. */
export function identifiers(ast: unknown): Set<string> {
  const names = new Set<string>();
  eachNode(ast, (node) => {
    if (node.op === 'id' && typeof node.args === 'string') names.add(node.args);
  });
  return names;
}
