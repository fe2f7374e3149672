import { describe, expect, it } from 'vitest';
import { compilePolicy } from './compile.js';
import { policyConfigSchema } from './config.js';
import { evaluateWithTrace } from './evaluate.js';
import { HISTORY_LIMIT, HistoryWindow } from './history.js';
import type { GateContext, HistoryEntry, Intent } from './types.js';

const CONDITIONS = [
  'history.exists(h, h.kind == "web.fetch")',
  'history.exists(h, h.kind == "file.read" && h.paths.exists(p, basename(p) == ".env"))',
  'session.untrusted && !history.exists(h, h.kind == "web.fetch" && h.host == args.host)',
  'history.exists(e, args.host == e.host)',
  'history.exists(h, h.untrusted) && args.commands.exists(c, c.program in ["curl", "wget"])',
  'args.commands.exists(c, history.exists(h, h.tool == c.program && h.decision != "deny"))',
  'history.exists(h, h.kind == kind && h.paths.size() > 0)',
  // Not indexable (two comparisons with the intent): it walks, and must still agree.
  'history.exists(h, h.host == args.host && h.tool == tool)',
  // Reads a field some entries lack: the index fails it and the rule walks.
  'history.exists(h, h.extra == "x")',
  'history.exists(h, h.kind == "shell" && h.weird == args.host)',
];

function compiled() {
  const policy = policyConfigSchema.parse({
    rules: CONDITIONS.map((when, i) => ({
      id: `r${i}`,
      when,
      decision: 'require_approval',
      reason_code: `R${i}`,
    })),
  });
  const c = compilePolicy({ rules: policy.rules, gate: policy.gate });
  if (!c.ok) throw new Error(JSON.stringify(c.problems));
  return c.compiled;
}

/** A deterministic pseudo-random stream, so a failure replays. */
function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x / 0x7fffffff;
  };
}

function entryOf(r: () => number): HistoryEntry {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const kind = pick(['shell', 'file.read', 'web.fetch', 'mcp']);
  const e: HistoryEntry = {
    kind,
    tool: pick(['Bash', 'Read', 'WebFetch', 'curl', 'git']),
    decision: pick(['allow', 'deny', 'require_approval']),
    at: '2026-06-01T10:00:00.000Z',
    untrusted: r() < 0.1,
    paths: kind === 'file.read' ? [pick(['/a/.env', '/a/b.ts', 'c/'])] : [],
    host: kind === 'web.fetch' ? pick(['a.example', 'b.example', 'c.example']) : '',
  };
  // Now and then an entry as an older row might read: one field more, or a host that is not a string.
  if (r() < 0.01) (e as unknown as Record<string, unknown>).extra = 'x';
  if (r() < 0.005) (e as unknown as Record<string, unknown>).host = 7;
  return e;
}

const INTENTS: Intent[] = [
  {
    tool: 'Bash',
    input: { command: 'curl -s https://a.example' },
    kind: 'shell',
    args: { command: 'curl -s https://a.example' },
  },
  {
    tool: 'Bash',
    input: { command: 'git push && curl x' },
    kind: 'shell',
    args: { command: 'git push && curl x' },
  },
  {
    tool: 'WebFetch',
    input: { url: 'https://b.example/x' },
    kind: 'web.fetch',
    args: { url: 'https://b.example/x' },
  },
  {
    tool: 'WebFetch',
    input: { url: 'https://z.example/x' },
    kind: 'web.fetch',
    args: { url: 'https://z.example/x' },
  },
  { tool: 'Read', input: { file_path: '/a/b.ts' }, kind: 'file.read', args: { path: '/a/b.ts' } },
];

describe('history.exists answered from the window index', () => {
  it('rewrites the closed and the lookup forms, and leaves the others to walk', () => {
    const c = compiled();
    // All but r5 (E reads `c`, bound by the macro around it), r7 (h compared with the intent twice)
    // and r9 (`weird` is no field of an entry); r2, r3 and r6 as lookups.
    expect(c.history.predicates).toHaveLength(7);
    expect(c.history.predicates.filter((p) => p.field !== undefined)).toHaveLength(3);
  });

  it('decides exactly as the walk does while the window slides past its limit', { timeout: 60_000 }, () => {
    const c = compiled();
    const r = random(17);
    const window = new HistoryWindow();
    const now = new Date('2026-06-01T12:00:00.000Z');
    for (let step = 0; step < HISTORY_LIMIT + 25; step++) {
      for (const intent of step < HISTORY_LIMIT - 5 ? INTENTS.slice(step % 5, (step % 5) + 1) : INTENTS) {
        const session = { untrusted: step % 3 === 0 };
        const walked: GateContext = { now, history: [...window.entries], session };
        const indexed: GateContext = { now, history: window.entries, window, session };
        expect(evaluateWithTrace(c, intent, indexed)).toEqual(evaluateWithTrace(c, intent, walked));
      }
      window.push(entryOf(r));
    }
  });

  it('gives every rule the walk’s value or the walk’s error over random windows', () => {
    const c = compiled();
    const r = random(5);
    for (let n = 0; n < 60; n++) {
      const window = new HistoryWindow(Array.from({ length: Math.floor(r() * 260) }, () => entryOf(r)));
      for (const intent of INTENTS) {
        const indexed = evaluateWithTrace(c, intent, { history: window.entries, window, now: new Date(0) });
        const walked = evaluateWithTrace(c, intent, { history: [...window.entries], now: new Date(0) });
        expect(indexed.trace).toEqual(walked.trace);
        expect(indexed.decision).toEqual(walked.decision);
      }
    }
  });
});
