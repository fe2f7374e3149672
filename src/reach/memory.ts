import type { Db } from '../store/port.js';
import type { InProcessTool } from './inprocess.js';
import { TouchFailure } from './protocol.js';
import * as q from './sql.js';

/**
 * Reach memory (seed §4.2), three layers, all scoped to the tenant and the owner (the task's owner
 * for a task-bound key, else the key's name): an agent key never reads another owner's rows.
 *
 * - Short-term: the last `reach.memory.short_term` (5) touches of a task, one summary line each — the
 *   `recent` part of `memory_read`. Read from the touch rows; nothing extra is stored.
 * - Working memory: `memory_write` / `memory_read`, key → JSON value per task (the seed's scratch
 *   paper: "order A confirmed", "user B's city"), so a later step does not touch the backend again.
 * - Long-term: `memory_search`, full-text over what tasks wrote and over touches archived when they
 *   leave short-term. SQLite FTS5 and PostgreSQL `tsvector` ('simple' configuration) over text this
 *   module cuts into words itself, so both stores see the same tokens and return the same rows.
 */

/**
 * Words for the index and for queries: lower case, letters and digits, every Han character its own
 * word (neither FTS5's unicode61 nor PostgreSQL's parser splits Chinese, and a one-character index
 * finds 打印机 inside 打印机坏了).
 */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/(\p{Script=Han})/gu, ' $1 ')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0)
    .slice(0, 2000);
}

function flatten(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(flatten).join(' ');
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${k} ${flatten(v)}`)
    .join(' ');
}

interface MemoryDeps {
  db: Db;
  tenant: string;
  now: () => number;
}

async function store(
  tx: Db,
  d: MemoryDeps,
  m: { owner: string; taskId: string; kind: 'note' | 'touch'; key: string; value: unknown; text: string },
): Promise<void> {
  const body = words(m.text).join(' ');
  const [row] = await tx.query<{ id: number }>(
    q.upsertMemory({
      tenant: d.tenant,
      owner: m.owner,
      taskId: m.taskId,
      kind: m.kind,
      key: m.key,
      value: JSON.stringify(m.value),
      body,
      now: d.now(),
    }),
  );
  if (tx.dialect === 'sqlite' && row) {
    await tx.query(q.deleteMemoryFts(Number(row.id)));
    await tx.query(q.insertMemoryFts(Number(row.id), body));
  }
}

/** Moves a task's touches beyond the newest `keep` into long-term memory (inside the finishing commit). */
export async function archiveShortTerm(
  tx: Db,
  d: MemoryDeps,
  owner: string,
  taskId: string,
  keep: number,
): Promise<void> {
  const rows = await tx.query<{
    request_id: string;
    caller: string;
    tool: string;
    summary: string;
    archived: number;
    created_at: number;
  }>(q.selectTaskSummaries(d.tenant, owner, taskId, keep + 5));
  for (const r of rows.slice(keep)) {
    if (Number(r.archived) === 1) continue;
    await store(tx, d, {
      owner,
      taskId,
      kind: 'touch',
      key: r.request_id,
      value: { tool: r.tool, summary: r.summary, at: new Date(Number(r.created_at)).toISOString() },
      text: `${r.tool} ${r.summary}`,
    });
    await tx.query(q.markArchived(d.tenant, r.caller, r.request_id));
  }
}

export interface MemoryOptions {
  shortTerm: number;
  maxValueBytes: number;
}

const KEY_SCHEMA = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f]+$' };

/** The three memory tools, as in-process registry entries (listed over MCP and GET /v1/tools). */
export function memoryTools(d: MemoryDeps, o: MemoryOptions): InProcessTool[] {
  const scope = (ctx: { owner: string; task_id: string | null }) => ({
    owner: ctx.owner,
    taskId: ctx.task_id ?? '',
  });
  return [
    {
      name: 'memory_write',
      description:
        "Save a value in this task's working memory under a key (overwrites). Use it for facts a later step needs, instead of touching the backend again.",
      schema: {
        type: 'object',
        required: ['key', 'value'],
        properties: { key: KEY_SCHEMA, value: { description: 'any JSON value' } },
      },
      permission: 'write',
      timeout: 'query',
      concurrency: 20,
      async run(params, ctx) {
        const text = JSON.stringify(params.value ?? null);
        if (Buffer.byteLength(text) > o.maxValueBytes)
          throw new TouchFailure(
            'RESULT_TOO_LARGE',
            `the value is over ${o.maxValueBytes} bytes; store a summary`,
            {
              limit_bytes: o.maxValueBytes,
            },
          );
        const s = scope(ctx);
        const key = String(params.key);
        await d.db.tx((tx) =>
          store(tx, d, {
            ...s,
            kind: 'note',
            key,
            value: params.value ?? null,
            text: `${key} ${flatten(params.value)}`,
          }),
        );
        return { stored: key, task_id: ctx.task_id };
      },
    },
    {
      name: 'memory_read',
      description: `Read this task's working memory (one key, or all) and a summary of its last ${o.shortTerm} tool touches.`,
      schema: { type: 'object', properties: { key: KEY_SCHEMA } },
      permission: 'read',
      timeout: 'query',
      concurrency: 20,
      async run(params, ctx) {
        const s = scope(ctx);
        const key = typeof params.key === 'string' ? params.key : null;
        const notes = await d.db.query<q.MemoryRow>(q.selectNotes(d.tenant, s.owner, s.taskId, key));
        const values = Object.fromEntries(notes.map((n) => [n.key, JSON.parse(n.value) as unknown]));
        if (key !== null) return { key, found: notes.length > 0, value: values[key] ?? null };
        const recent = ctx.task_id
          ? (
              await d.db.query<{ request_id: string; tool: string; summary: string; created_at: number }>(
                q.selectTaskSummaries(d.tenant, s.owner, ctx.task_id, o.shortTerm),
              )
            ).map((r) => ({
              request_id: r.request_id,
              tool: r.tool,
              summary: r.summary,
              at: new Date(Number(r.created_at)).toISOString(),
            }))
          : [];
        return { task_id: ctx.task_id, notes: values, recent };
      },
    },
    {
      name: 'memory_search',
      description:
        'Search long-term memory: what your tasks saved with memory_write and older tool touches. Every word must match.',
      schema: {
        type: 'object',
        required: ['query'],
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 500 },
          limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
        },
      },
      permission: 'read',
      timeout: 'query',
      concurrency: 20,
      async run(params, ctx) {
        const w = words(String(params.query)).slice(0, 20);
        if (w.length === 0) return { query: params.query, results: [] };
        const rows = await d.db.query<q.MemoryRow>(
          q.searchMemory(d.db.dialect, d.tenant, ctx.owner, w, Number(params.limit ?? 10)),
        );
        return {
          query: params.query,
          results: rows.map((r) => ({
            kind: r.kind,
            task_id: r.task_id || null,
            key: r.key,
            value: JSON.parse(r.value) as unknown,
            updated_at: new Date(Number(r.updated_at)).toISOString(),
          })),
        };
      },
    },
  ];
}
