import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasLoneSurrogate } from '../text/index.js';
import { CanonicalJsonError, canonicalJson } from './digest.js';
import { checkJsonValue, jsonProblem, MAX_JSON_DEPTH, readJsonText } from './json.js';

// Strings as senders write them, lone surrogates included: `JSON.stringify` writes one as `\udXXX`.
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const anyString = fc.string({
  unit: fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: loneSurrogate },
  ),
  maxLength: 40,
});
const anyJson = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    anyString,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(anyString, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** `depth` containers inside each other, each an array or an object as `kinds` says, around `leaf`. */
function nested(kinds: boolean[], leaf: string): string {
  let text = leaf;
  for (const array of kinds) text = array ? `[${text}]` : `{"k":${text}}`;
  return text;
}

describe('reading JSON from outside (properties)', () => {
  it('never throws, and whatever it accepts has an RFC 8785 form', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const text = JSON.stringify(value) ?? 'null';
        const read = readJsonText(text);
        if (read.ok) expect(() => canonicalJson(read.value)).not.toThrow();
        else expect(['unrepresentable_json', 'json_too_deep']).toContain(read.code);
        expect(read.ok).toBe(jsonProblem(JSON.parse(text)) === undefined);
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a string with a lone surrogate anywhere, in a value or a key, with one code', () => {
    fc.assert(
      fc.property(anyString, fc.boolean(), (s, asKey) => {
        const read = readJsonText(JSON.stringify(asKey ? { [s]: 1 } : { a: [s] }));
        expect(read.ok).toBe(!hasLoneSurrogate(s));
        if (!read.ok) expect(read.code).toBe('unrepresentable_json');
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts any nesting up to 64 and refuses anything deeper with json_too_deep', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 200 }), (kinds) => {
        const read = readJsonText(nested(kinds, '1'));
        if (kinds.length <= MAX_JSON_DEPTH) expect(read.ok).toBe(true);
        else expect(read).toMatchObject({ ok: false, code: 'json_too_deep' });
      }),
      { numRuns: 500 },
    );
  });

  it('repairs, in repair mode, anything but depth, and leaves a well-formed value as it was', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const text = JSON.stringify(value) ?? 'null';
        const read = readJsonText(text, { repair: true });
        expect(read.ok).toBe(true);
        if (!read.ok) return;
        expect(() => canonicalJson(read.value)).not.toThrow();
        if (jsonProblem(JSON.parse(text)) === undefined) expect(read.value).toEqual(JSON.parse(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('reads a body at the size limit, however it is shaped', () => {
    const wide = JSON.stringify({ items: Array.from({ length: 45_000 }, (_, i) => ({ i, s: 'é🚀' })) });
    expect(wide.length).toBeGreaterThan(900_000);
    expect(readJsonText(wide).ok).toBe(true);
    const deep = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
    expect(readJsonText(deep)).toMatchObject({ ok: false, code: 'json_too_deep' });
  });
});

describe('reading JSON from outside (examples)', () => {
  it('names the path of the problem', () => {
    expect(readJsonText('{"input":{"cmd":["ok","\\ud83d"]}}')).toMatchObject({
      ok: false,
      code: 'unrepresentable_json',
      message: expect.stringContaining('input.cmd.1'),
    });
    expect(readJsonText('{"n":1e999}')).toMatchObject({ ok: false, code: 'unrepresentable_json' });
    expect(readJsonText('{"a":')).toMatchObject({ ok: false, code: 'invalid_json' });
  });

  it('repairs a lone surrogate to U+FFFD and a number beyond a double to null', () => {
    expect(readJsonText('{"a":"x\\ud83d","\\udc00k":1e999}', { repair: true })).toEqual({
      ok: true,
      value: { a: 'x\ufffd', '\ufffdk': null },
    });
  });

  it('keeps a __proto__ key an own property while repairing', () => {
    const read = readJsonText('{"__proto__":{"polluted":"\\ud800"}}', { repair: true });
    expect(read.ok && Object.hasOwn(read.value as object, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('checks a value an SDK already parsed the same way', () => {
    expect(checkJsonValue({ a: '\ud800' })).toMatchObject({ ok: false, code: 'unrepresentable_json' });
  });
});

describe('canonicalJson', () => {
  it('throws a typed error naming the problem instead of the library message', () => {
    expect(() => canonicalJson({ a: 'x\ud83d' })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ n: Number.POSITIVE_INFINITY })).toThrow(/beyond the range/);
    const deep = JSON.parse(`${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    try {
      canonicalJson(deep);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CanonicalJsonError);
      expect((err as CanonicalJsonError).problem.kind).toBe('too_deep');
    }
  });
});

describe('the fast path for text that cannot hold an unrepresentable value', () => {
  // Texts the walk must still see: numbers past a double, written every way JSON allows.
  const numbers = fc.oneof(
    fc.double().map((d) => JSON.stringify(d)),
    fc
      .tuple(fc.integer({ min: -400, max: 400 }), fc.boolean())
      .map(([e, neg]) => `${neg ? '-' : ''}1.5e${e}`),
    fc.integer({ min: 1, max: 420 }).map((n) => '9'.repeat(n)),
    fc
      .tuple(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 99 }))
      .map(([n, e]) => `${'9'.repeat(n)}E+${e}`),
  );
  const texts = fc.oneof(
    anyJson.map((v) => JSON.stringify(v) ?? 'null'),
    numbers,
    fc.tuple(anyJson, numbers).map(([v, n]) => `{"v":${JSON.stringify(v) ?? 'null'},"n": [ ${n} ]}`),
    // Nesting past the limit before or after such a number: whichever the walk meets first is named.
    fc.tuple(numbers, fc.boolean()).map(([n, first]) => {
      const deep = `${'['.repeat(MAX_JSON_DEPTH + 2)}${']'.repeat(MAX_JSON_DEPTH + 2)}`;
      return first ? `[${n}, ${deep}]` : `[${deep}, ${n}]`;
    }),
  );

  it('answers exactly what the full walk answers, repairing or not', () => {
    fc.assert(
      fc.property(texts, fc.boolean(), (text, repair) => {
        const fast = readJsonText(text, { repair });
        const full = checkJsonValue(JSON.parse(text), { repair });
        expect(fast.ok).toBe(full.ok);
        if (fast.ok && full.ok) expect(fast.value).toEqual(full.value);
        if (!fast.ok && !full.ok) expect([fast.code, fast.message]).toEqual([full.code, full.message]);
      }),
      { numRuns: 2000 },
    );
  });

  it('still refuses a number past a double and a nesting too deep on the fast path', () => {
    expect(readJsonText('{"a": -1e999}').ok).toBe(false);
    expect(readJsonText(`[${'9'.repeat(320)}]`).ok).toBe(false);
    expect(readJsonText(`${'9'.repeat(250)}e80`).ok).toBe(false);
    expect(readJsonText('{"a": 1e308}').ok).toBe(true);
    const deep = readJsonText(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`);
    expect(deep.ok === false && deep.code).toBe('json_too_deep');
  });
});
