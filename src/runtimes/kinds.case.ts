import { describe, expect, it } from 'vitest';
import type { Classified } from '../gate/kinds.js';
import { loadFixtures } from './runtime.case.js';
import type { RuntimeAdapter } from './runtime.js';

/**
 * The table test every runtime passes: each recorded payload under `fixtures/kinds/` (a shell, write,
 * edit, read, fetch, search and MCP call, where the runtime has that tool) normalizes to an intent of
 * the expected canonical kind and args, and the envelope's subject records the kind. A fixture
 * without an expectation, or an expectation without a fixture, fails: the table is the whole truth.
 */
export function kindsCase(
  adapter: RuntimeAdapter,
  fixturesDir: string,
  expected: Readonly<Record<string, Classified & { tool: string }>>,
): void {
  const fixtures = loadFixtures(fixturesDir);
  describe(`${adapter.kind} canonical kinds`, () => {
    it('has exactly one expectation per recorded payload', () => {
      expect(fixtures.map((f) => f.name).sort()).toEqual(Object.keys(expected).sort());
    });

    for (const { name, payload } of fixtures) {
      const want = expected[name];
      it(`maps the ${name} payload to ${want?.kind ?? '?'} with its canonical args`, () => {
        const n = adapter.normalize(payload);
        expect(n.problem).toBeUndefined();
        expect(n.intent?.tool).toBe(want?.tool);
        expect(n.classified).toEqual({ kind: want?.kind, args: want?.args });
        expect(n.envelopes[0]?.subject?.kind).toBe(want?.kind);
      });
    }
  });
}
