import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { positional } from './sqlite-params.js';
import { SqliteDb } from './sqlite.js';

describe('positional placeholders', () => {
  it('rewrites each $n to ? and says which value each takes, repeats included', () => {
    expect(positional('INSERT INTO t (a, b, c) VALUES ($1, $2, $1)')).toEqual({
      text: 'INSERT INTO t (a, b, c) VALUES (?, ?, ?)',
      order: [0, 1, 0],
    });
    expect(positional('SELECT $12 + $3')).toEqual({ text: 'SELECT ? + ?', order: [11, 2] });
    expect(positional('SELECT 1')).toEqual({ text: 'SELECT 1', order: [] });
  });

  it('leaves $n inside literals, quoted identifiers and comments alone', () => {
    const sql = `SELECT '$1', 'it''s $2', "$3" AS x -- $6
      /* $7 */ FROM t WHERE a = $1`;
    const p = positional(sql);
    expect(p?.order).toEqual([0]);
    expect(p?.text.endsWith('WHERE a = ?')).toBe(true);
    expect(p?.text).toContain(`'it''s $2'`);
    expect(p?.text).toContain('-- $6');
    // An unclosed literal or comment hides what follows, as SQLite reads it (and then refuses it).
    expect(positional("SELECT $1, 'open $2")?.order).toEqual([0]);
    expect(positional('SELECT $1 /* open $2')?.order).toEqual([0]);
  });

  it('keeps the named form for a text with placeholders of its own', () => {
    for (const sql of ['SELECT ? + $1', 'SELECT :a', 'SELECT @a', 'SELECT $a'])
      expect(positional(sql), sql).toBeUndefined();
  });

  it('binds the same rows as the named form, for any order and repeats of placeholders', async () => {
    const raw = new Database(':memory:');
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 12 }),
          fc.array(fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double({ noNaN: true })), {
            minLength: 6,
            maxLength: 6,
          }),
          async (marks, values) => {
            const sql = `SELECT ${marks.map((m, i) => `$${m} AS c${i}`).join(', ')}`;
            const named = Object.fromEntries(values.map((v, i) => [String(i + 1), v]));
            const expected = raw.prepare(sql).all(named);
            const p = positional(sql);
            if (!p) throw new Error('no positional form');
            expect(raw.prepare(p.text).all(...p.order.map((i) => values[i]))).toEqual(expected);
          },
        ),
      );
    } finally {
      raw.close();
    }
  });

  it('the store refuses a statement given too few values, in a transaction and outside one', async () => {
    const db = new SqliteDb({ path: ':memory:' });
    try {
      await db.query({ text: 'CREATE TABLE t (a, b)' });
      await expect(db.query({ text: 'INSERT INTO t VALUES ($1, $2)', values: [1] })).rejects.toThrow();
      await expect(
        db.query({ text: 'SELECT * FROM t WHERE a = $1 AND b = $2', values: [1] }),
      ).rejects.toThrow();
      await db.tx(async (tx) => {
        await expect(tx.query({ text: 'INSERT INTO t VALUES ($1, $2)', values: [1] })).rejects.toThrow();
        await tx.query({ text: 'INSERT INTO t VALUES ($1, $2)', values: [1, true] });
      });
      expect(await db.query({ text: 'SELECT a, b FROM t' })).toEqual([{ a: 1, b: 1 }]);
    } finally {
      await db.close();
    }
  });
});
