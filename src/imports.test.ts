import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The rules of docs/ARCHITECTURE.md ("How modules meet"), read off the import statements. Production
 * files only: a test may reach anything it needs to drive a module (its `testing.ts` helpers too),
 * but nothing under `src/` imports `test/`.
 */

const SRC = dirname(fileURLToPath(import.meta.url));
const CORE = ['envelope', 'errors', 'store', 'log', 'config', 'text', 'trace'];

interface Edge {
  file: string;
  from: string;
  to: string;
  target: string;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const isTestFile = (rel: string) =>
  /\.test\.ts$|\.case\.ts$|(^|\/)testing\.ts$|(^|\/)testing\//.test(rel) || rel.startsWith('testing/');

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!).filter((s) => s.startsWith('.'));
}

const folderOf = (rel: string) => (rel.includes('/') ? rel.split('/')[0]! : '(root)');

const files = walk(SRC).map((f) => relative(SRC, f));
const production = files.filter((f) => !isTestFile(f));

const edges: Edge[] = production.flatMap((file) =>
  imports(join(SRC, file)).flatMap((spec) => {
    const target = relative(SRC, normalize(join(SRC, dirname(file), spec)));
    if (target.startsWith('..')) return [];
    const from = folderOf(file);
    const to = folderOf(target);
    return from === to ? [] : [{ file, from, to, target }];
  }),
);

const offending = (pred: (e: Edge) => boolean) =>
  edges.filter(pred).map((e) => `src/${e.file} imports src/${e.target}`);

describe('how modules meet (import rules)', () => {
  it('keeps the core (envelope, errors, store, log, config, text, trace) to itself', () => {
    expect(offending((e) => CORE.includes(e.from) && !CORE.includes(e.to))).toEqual([]);
  });

  it('lets the kernel import only the core', () => {
    expect(offending((e) => e.from === 'kernel' && !CORE.includes(e.to))).toEqual([]);
  });

  it('keeps runtimes, sources, channels, delivery and notify out of the gate: a decision never sends', () => {
    const banned = ['runtimes', 'hook', 'ingress', 'channels', 'delivery', 'notify', 'egress'];
    expect(offending((e) => e.from === 'gate' && banned.includes(e.to))).toEqual([]);
  });

  it('keeps channel and delivery files out of notify: it writes the outbox, the engine delivers', () => {
    expect(
      offending((e) => e.from === 'notify' && ['channels', 'delivery', 'egress'].includes(e.to)),
    ).toEqual([]);
  });

  it('lets channels and delivery depend on each other in one direction at most', () => {
    const toDelivery = offending((e) => e.from === 'channels' && e.to === 'delivery');
    const toChannels = offending((e) => e.from === 'delivery' && e.to === 'channels');
    expect(
      toDelivery.length === 0 || toChannels.length === 0,
      [...toDelivery, ...toChannels].join('\n'),
    ).toBe(true);
  });

  it('has no import cycle between folders', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      if (!graph.has(e.from)) graph.set(e.from, new Set());
      graph.get(e.from)!.add(e.to);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (n: string) => {
      if (state.get(n) === 'done') return;
      if (state.get(n) === 'open') {
        cycles.push([...path.slice(path.indexOf(n)), n].join(' → '));
        return;
      }
      state.set(n, 'open');
      path.push(n);
      for (const m of graph.get(n) ?? []) visit(m);
      path.pop();
      state.set(n, 'done');
    };
    for (const n of graph.keys()) visit(n);
    const example = (cycle: string) => {
      const [a, b] = cycle.split(' → ');
      const e = edges.find((x) => x.from === a && x.to === b);
      return `${cycle} (e.g. src/${e?.file} imports src/${e?.target})`;
    };
    expect(cycles.map(example)).toEqual([]);
  });

  it('never imports test/ from src/', () => {
    const found = files.flatMap((file) =>
      imports(join(SRC, file))
        .filter((spec) => relative(SRC, normalize(join(SRC, dirname(file), spec))).startsWith('../test/'))
        .map((spec) => `src/${file} imports ${spec}`),
    );
    expect(found).toEqual([]);
  });

  it('reads imports at all (the rules above are not vacuous)', () => {
    expect(edges.some((e) => e.from === 'server' && e.to === 'gate')).toBe(true);
    expect(production.length).toBeGreaterThan(100);
  });
});
