import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Issue #12: SQL lives in each module's `sql.ts` and nowhere else, and a module's `sql.ts` names only
 * the tables its own migrations create. Another module's rows are reached through that module's API
 * (`log.get`, `log.outboxDepth`, `ApprovalService.expiring`), never through its tables.
 */

const SRC = fileURLToPath(new URL('.', import.meta.url));

/**
 * A literal that starts a statement. SQL here is written with upper-case keywords, and each keyword
 * must be followed by what makes it a statement, so prose ("Select a file", "INSERT … gave no row")
 * does not count.
 */
const STATEMENT =
  /^\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|WITH\s+(RECURSIVE\s+)?\w+\s+AS\s*\(|CREATE\s+(UNIQUE\s+)?(TABLE|INDEX|SCHEMA|VIEW|TRIGGER)\s)/;

/** A table a statement reads or writes. */
const TABLE_REF = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?([a-z_][a-z0-9_]*)/g;

/** SQL outside a `sql.ts` that stays, with the reason. Each entry names the file and the statement. */
const ALLOWED: { file: string; statement: string; why: string }[] = [
  {
    file: 'server/core-routes.ts',
    statement: 'SELECT 1 AS ok',
    why: 'the readiness probe names no table; it moves with the kernel work on src/server',
  },
];

const posix = (p: string) => p.split('\\').join('/');

/** Source files, test support left out: tests may look at any table to check what was written. */
function sourceFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .map(posix)
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => !/\.(test|case)\.ts$/.test(f))
    .filter((f) => !f.split('/').includes('testing') && basename(f) !== 'testing.ts')
    .sort();
}

interface Literal {
  line: number;
  /** The literal's text; for a template, its fixed parts joined (what is written, not interpolated). */
  text: string;
}

function literals(file: string): Literal[] {
  const path = join(SRC, file);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Literal[] = [];
  const visit = (node: ts.Node) => {
    let text: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node))
      text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ');
    if (text !== undefined)
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text });
    // A template's spans are visited too: a statement built inside `${…}` is still a statement.
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const statements = (file: string) => literals(file).filter((l) => STATEMENT.test(l.text));
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Every migration file, with the module that owns it: the folder it lives in (`src/<module>/migrations/`). */
function migrationFiles(): { module: string; dialect: string; name: string; path: string }[] {
  return readdirSync(SRC)
    .filter((m) => existsSync(join(SRC, m, 'migrations')))
    .flatMap((module) =>
      readdirSync(join(SRC, module, 'migrations')).flatMap((dialect) =>
        readdirSync(join(SRC, module, 'migrations', dialect))
          .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
          .map((name) => ({ module, dialect, name, path: join(SRC, module, 'migrations', dialect, name) })),
      ),
    );
}

/** Table → the module whose migrations create it, read from both dialects. */
function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const { module, dialect, name, path } of migrationFiles()) {
    const sqlText = readFileSync(path, 'utf8');
    for (const m of sqlText.matchAll(/CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) {
      const table = m[1]!.toLowerCase();
      const before = owners.get(table);
      if (before && before !== module)
        throw new Error(`${table} is created by both ${before} and ${module} (${dialect}/${name})`);
      owners.set(table, module);
    }
  }
  return owners;
}

const moduleOf = (file: string) => file.split('/')[0]!;

describe('where SQL lives', () => {
  it('sees the statements it looks for (the check is not blind)', () => {
    expect(statements('log/sql.ts').length).toBeGreaterThan(5);
    expect(STATEMENT.test('INSERT … RETURNING gave no row')).toBe(false);
    expect(STATEMENT.test('Select a channel')).toBe(false);
    expect(STATEMENT.test(`WITH h AS (SELECT seq FROM log_head)`)).toBe(true);
  });

  it('keeps every statement in a sql.ts file (or in src/store, which runs them)', () => {
    const stray: string[] = [];
    for (const file of sourceFiles()) {
      if (basename(file) === 'sql.ts' || file.startsWith('store/')) continue;
      for (const s of statements(file)) {
        const text = oneLine(s.text);
        if (ALLOWED.some((a) => a.file === file && a.statement === text)) continue;
        stray.push(`src/${file}:${s.line}: ${text.slice(0, 100)}`);
      }
    }
    expect(stray).toEqual([]);
  });

  it('lists no allowance that is no longer needed', () => {
    for (const a of ALLOWED) {
      expect(
        statements(a.file).map((s) => oneLine(s.text)),
        `${a.file}: ${a.why}`,
      ).toContain(a.statement);
    }
  });
});

describe('whose tables a module names', () => {
  const owners = tableOwners();

  it('reads every table from the migrations, each owned by a module folder', () => {
    expect(owners.get('events')).toBe('log');
    expect(owners.get('outbox')).toBe('log');
    expect(owners.get('approvals')).toBe('approvals');
    const folders = new Set(readdirSync(SRC));
    for (const [table, module] of owners) expect(folders, `${table} → src/${module}`).toContain(module);
  });

  it("names in a module's sql.ts only the tables that module's migrations create", () => {
    const foreign: string[] = [];
    for (const file of sourceFiles().filter((f) => basename(f) === 'sql.ts')) {
      const module = moduleOf(file);
      for (const l of literals(file)) {
        for (const m of l.text.matchAll(TABLE_REF)) {
          const owner = owners.get(m[1]!);
          if (owner && owner !== module)
            foreign.push(`src/${file}:${l.line}: ${m[1]} belongs to ${owner} (go through its API)`);
        }
      }
    }
    expect(foreign).toEqual([]);
  });

  it('alters a table only in a migration of the module that created it', () => {
    const strays: string[] = [];
    for (const { module, path } of migrationFiles()) {
      const text = readFileSync(path, 'utf8');
      for (const m of text.matchAll(/\b(?:ALTER\s+TABLE|ON)\s+([a-z_][a-z0-9_]*)/gi)) {
        const owner = owners.get(m[1]!.toLowerCase());
        if (owner && owner !== module) strays.push(`${relative(SRC, path)}: ${m[0]} (owned by ${owner})`);
      }
    }
    expect(strays).toEqual([]);
  });
});
