import type pg from 'pg';
import { pgDriver } from '../../store/postgres.js';
import type { Permission } from '../config.js';
import { TouchFailure } from '../protocol.js';
import { bindValue, type SqlTemplate } from './sql-params.js';
import { SqlitePool } from './sqlite-pool.js';
import type { Backend, RunContext } from './types.js';
import { prefix } from '../../text/index.js';

/**
 * `sql` tools: the query from config, parameters bound by name, read-only unless the tool's
 * permission says otherwise. SQLite opens the file `readonly` (in a worker thread, sqlite-pool.ts);
 * PostgreSQL runs each call in its own transaction, `SET TRANSACTION READ ONLY` for read tools, with
 * `statement_timeout` at the tool's deadline so the server stops the work too.
 */

/** Rows past this are not read: the answer is RESULT_TOO_LARGE before it is built. */
export const MAX_ROWS = 50_000;

export type SqlTarget = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

/** `postgres://…` / `postgresql://…` is PostgreSQL; `sqlite:`/`file:` prefixes or a bare path, SQLite. */
export function sqlTarget(location: string): SqlTarget {
  if (/^postgres(ql)?:\/\//i.test(location)) return { dialect: 'postgres', url: location };
  const path = location.replace(/^sqlite:(\/\/)?/i, '').replace(/^file:(\/\/)?/i, '');
  return { dialect: 'sqlite', path };
}

/** A JSON-safe row: dates as ISO strings, bytes as base64, big integers as strings when unsafe. */
function jsonRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (v instanceof Date) out[k] = Number.isNaN(v.getTime()) ? null : v.toISOString();
    else if (v instanceof Uint8Array) out[k] = Buffer.from(v).toString('base64');
    else if (typeof v === 'bigint') out[k] = Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    else out[k] = v;
  }
  return out;
}

function checkSize(rows: unknown[], ctx: RunContext): void {
  if (rows.length > MAX_ROWS)
    throw new TouchFailure('RESULT_TOO_LARGE', `the query returned more than ${MAX_ROWS} rows; add a LIMIT`, {
      limit_rows: MAX_ROWS,
    });
  const bytes = Buffer.byteLength(JSON.stringify(rows));
  if (bytes > ctx.maxBytes)
    throw new TouchFailure(
      'RESULT_TOO_LARGE',
      `the query returned ${rows.length} rows (${bytes} bytes), over the limit of ${ctx.maxBytes} bytes; ask for fewer rows or columns`,
      { limit_bytes: ctx.maxBytes, rows: rows.length },
    );
}

function failure(code: string, message: string): TouchFailure {
  // Driver messages name the failing construct ("no such column: titel"), never a credential.
  return new TouchFailure('TOOL_FAILED', `the database refused the query: ${message}`, {
    status: code,
    excerpt: prefix(message, 300),
  });
}

export function sqliteBackend(
  path: string,
  t: SqlTemplate,
  permission: Permission,
  concurrency: number,
): Backend {
  const pool = new SqlitePool(path, permission === 'read', Math.min(concurrency, 8));
  return {
    async run(params, ctx) {
      const values: Record<string, unknown> = {};
      t.names.forEach((name, i) => {
        values[String(i + 1)] = bindValue(params[name], 'sqlite');
      });
      const answer = await pool.run(t.positional, values, MAX_ROWS, ctx.signal);
      if ('error' in answer) {
        if (answer.error.code === 'SQLITE_READONLY')
          throw new TouchFailure('TOOL_FAILED', 'this tool is read-only and its query tried to write', {
            status: answer.error.code,
          });
        throw failure(answer.error.code, answer.error.message);
      }
      if ('rows' in answer) {
        const rows = answer.rows.map(jsonRow);
        checkSize(rows, ctx);
        return rows;
      }
      return answer;
    },
    close: () => pool.close(),
  };
}

export function postgresBackend(
  url: string,
  t: SqlTemplate,
  permission: Permission,
  concurrency: number,
): Backend {
  const pool = new (pgDriver().Pool)({
    connectionString: url,
    max: concurrency,
    connectionTimeoutMillis: 5000,
  });
  // An idle connection that loses its server must not crash the gateway; the next call reports it.
  pool.on('error', () => {});
  const readOnly = permission === 'read';
  return {
    async run(params, ctx) {
      const values = t.names.map((name) => bindValue(params[name], 'postgres'));
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw new TouchFailure('TOOL_FAILED', 'the database is unreachable', {
          status: (err as { code?: string }).code ?? 'connect',
        });
      }
      let broken = false;
      const onAbort = () => {
        // The server stops the statement at statement_timeout; the socket is dropped now.
        broken = true;
        client.release(true);
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const budget = Math.max(1, Math.floor(ctx.timeoutMs));
        await client.query(
          `BEGIN;${readOnly ? ' SET TRANSACTION READ ONLY;' : ''} SET LOCAL statement_timeout = ${budget}`,
        );
        const res = await client.query({ text: t.positional, values });
        await client.query('COMMIT');
        if (res.command === 'SELECT' || (res.fields && res.fields.length > 0)) {
          const rows = (res.rows as Record<string, unknown>[]).map(jsonRow);
          checkSize(rows, ctx);
          return rows;
        }
        return { changes: res.rowCount ?? 0 };
      } catch (err) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (!broken) await client.query('ROLLBACK').catch(() => {});
        if (err instanceof TouchFailure) throw err;
        const e = err as { code?: string; message?: string };
        if (e.code === '25006')
          throw new TouchFailure('TOOL_FAILED', 'this tool is read-only and its query tried to write', {
            status: e.code,
          });
        throw failure(e.code ?? 'error', e.message ?? 'unknown error');
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
        if (!broken) client.release();
      }
    },
    close: () => pool.end(),
  };
}
