import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RUNTIME_KINDS, runtimeFor } from './index.js';
import { parseRaw } from './shared.js';

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const anyString = fc.string({
  unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), loneSurrogate),
  maxLength: 40,
});
const hookish = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'hook_event_name',
      'session_id',
      'tool_name',
      'tool_input',
      'last_assistant_message',
      'cwd',
    ),
    anyString,
  ),
  fc.oneof(
    anyString,
    fc.jsonValue(),
    fc.integer({ min: 1, max: 300 }).map((n) => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`)),
  ),
  { maxKeys: 6 },
);

describe('reading a hook input (properties)', () => {
  it('never throws: any bytes are an object to normalize or a problem, never an exception', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 })),
        (raw) => {
          const parsed = parseRaw(raw);
          expect(parsed.ok ? typeof parsed.value : typeof parsed.problem).toMatch(/object|string/);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('every runtime normalizes any hook-shaped JSON, or names a problem with the catalogue code', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RUNTIME_KINDS), hookish, (kind, body) => {
        const n = runtimeFor(kind)!.normalize(new TextEncoder().encode(JSON.stringify(body)));
        if (n.problem?.includes('refused')) expect(n.problem).toMatch(/unrepresentable_json|json_too_deep/);
        expect(n.envelopes.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });
});
