import type { Dialect } from '../store/port.js';

/** SQL of the reach module (tables in migrations 0700–0703). Shared text unless a dialect differs. */

export interface TouchRow {
  tenant_id: string;
  caller: string;
  request_id: string;
  task_id: string | null;
  owner: string;
  tool: string;
  channel: string;
  params_digest: string;
  status: string;
  approval_id: string | null;
  response_ref: string | null;
  error_code: string | null;
  summary: string | null;
  archived: number;
  cost_ms: number | null;
  created_at: number;
  updated_at: number;
  deadline_at: number;
  expires_at: number;
  /** A `channels:` webhook name: the finished touch is delivered there (async touches only). */
  callback: string | null;
}

const TOUCH_COLUMNS = `tenant_id, caller, request_id, task_id, owner, tool, channel, params_digest, status,
  approval_id, response_ref, error_code, summary, archived, cost_ms, created_at, updated_at, deadline_at, expires_at, callback`;

/** Claims the request id; no row back when the caller already used it (the caller then reads it). */
export const insertTouch = (r: Omit<TouchRow, 'archived'>) => ({
  text: `INSERT INTO reach_touches (${TOUCH_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 0, $14, $15, $16, $17, $18, $19)
         ON CONFLICT (tenant_id, caller, request_id) DO NOTHING RETURNING request_id`,
  values: [
    r.tenant_id,
    r.caller,
    r.request_id,
    r.task_id,
    r.owner,
    r.tool,
    r.channel,
    r.params_digest,
    r.status,
    r.approval_id,
    r.response_ref,
    r.error_code,
    r.summary,
    r.cost_ms,
    r.created_at,
    r.updated_at,
    r.deadline_at,
    r.expires_at,
    r.callback,
  ],
});

export const selectTouch = (tenant: string, caller: string, requestId: string) => ({
  text: `SELECT ${TOUCH_COLUMNS} FROM reach_touches WHERE tenant_id = $1 AND caller = $2 AND request_id = $3`,
  values: [tenant, caller, requestId],
});

export const countTaskTouches = (tenant: string, taskId: string) => ({
  text: 'SELECT COUNT(*) AS n FROM reach_touches WHERE tenant_id = $1 AND task_id = $2',
  values: [tenant, taskId],
});

export const markRunning = (
  tenant: string,
  caller: string,
  requestId: string,
  deadline: number,
  now: number,
) => ({
  text: `UPDATE reach_touches SET status = 'running', deadline_at = $4, updated_at = $5
         WHERE tenant_id = $1 AND caller = $2 AND request_id = $3 AND status = 'awaiting_approval'
         RETURNING request_id`,
  values: [tenant, caller, requestId, deadline, now],
});

export const markAwaiting = (
  tenant: string,
  caller: string,
  requestId: string,
  approvalId: string,
  now: number,
) => ({
  text: `UPDATE reach_touches SET status = 'awaiting_approval', approval_id = $4, updated_at = $5
         WHERE tenant_id = $1 AND caller = $2 AND request_id = $3`,
  values: [tenant, caller, requestId, approvalId, now],
});

export const finishTouch = (f: {
  tenant: string;
  caller: string;
  requestId: string;
  status: 'done' | 'failed';
  responseRef: string;
  errorCode: string | null;
  summary: string | null;
  costMs: number;
  now: number;
}) => ({
  text: `UPDATE reach_touches SET status = $4, response_ref = $5, error_code = $6, summary = $7, cost_ms = $8,
         updated_at = $9 WHERE tenant_id = $1 AND caller = $2 AND request_id = $3 RETURNING callback`,
  values: [f.tenant, f.caller, f.requestId, f.status, f.responseRef, f.errorCode, f.summary, f.costMs, f.now],
});

/** The task's finished touches that carry a summary, newest first: short-term memory and archiving. */
export const selectTaskSummaries = (tenant: string, owner: string, taskId: string, limit: number) => ({
  text: `SELECT request_id, caller, tool, summary, archived, created_at FROM reach_touches
         WHERE tenant_id = $1 AND owner = $2 AND task_id = $3 AND summary IS NOT NULL
         ORDER BY created_at DESC, request_id DESC LIMIT $4`,
  values: [tenant, owner, taskId, limit],
});

export const markArchived = (tenant: string, caller: string, requestId: string) => ({
  text: 'UPDATE reach_touches SET archived = 1 WHERE tenant_id = $1 AND caller = $2 AND request_id = $3',
  values: [tenant, caller, requestId],
});

/** Touches left `running` past their deadline by a gateway that stopped: failed, for GET and the cap. */
export const failInterrupted = (before: number, now: number) => ({
  text: `UPDATE reach_touches SET status = 'failed', error_code = 'TIMEOUT', updated_at = $2
         WHERE status = 'running' AND deadline_at < $1 RETURNING request_id`,
  values: [before, now],
});

export const deleteExpiredTouches = (now: number) => ({
  text: 'DELETE FROM reach_touches WHERE expires_at < $1 RETURNING request_id',
  values: [now],
});

// ——— memory ———

export interface MemoryRow {
  id: number;
  task_id: string;
  kind: string;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
}

export const upsertMemory = (m: {
  tenant: string;
  owner: string;
  taskId: string;
  kind: 'note' | 'touch';
  key: string;
  value: string;
  body: string;
  now: number;
}) => ({
  text: `INSERT INTO reach_memory (tenant_id, owner, task_id, kind, key, value, body, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
         ON CONFLICT (tenant_id, owner, task_id, kind, key)
         DO UPDATE SET value = excluded.value, body = excluded.body, updated_at = excluded.updated_at
         RETURNING id`,
  values: [m.tenant, m.owner, m.taskId, m.kind, m.key, m.value, m.body, m.now],
});

/** SQLite keeps its FTS5 index in step by hand: the old entry out, the new one in. */
export const deleteMemoryFts = (id: number) => ({
  text: 'DELETE FROM reach_memory_fts WHERE rowid = $1',
  values: [id],
});

export const insertMemoryFts = (id: number, body: string) => ({
  text: 'INSERT INTO reach_memory_fts (rowid, body) VALUES ($1, $2)',
  values: [id, body],
});

const MEMORY_COLUMNS = 'm.id, m.task_id, m.kind, m.key, m.value, m.created_at, m.updated_at';

export const selectNotes = (tenant: string, owner: string, taskId: string, key: string | null) => ({
  text: `SELECT ${MEMORY_COLUMNS} FROM reach_memory m
         WHERE m.tenant_id = $1 AND m.owner = $2 AND m.task_id = $3 AND m.kind = 'note'
           AND ($4 = '' OR m.key = $4)
         ORDER BY m.key LIMIT 200`,
  values: [tenant, owner, taskId, key ?? ''],
});

/**
 * Full-text search over one owner's memory; `words` are already normalized (memory.ts), joined by
 * spaces. Both dialects require every word (FTS5's implicit AND, `plainto_tsquery`'s `&`) and order
 * by recency, so the shared suite sees the same rows from both.
 */
export const searchMemory = (
  dialect: Dialect,
  tenant: string,
  owner: string,
  words: string[],
  limit: number,
) =>
  dialect === 'sqlite'
    ? {
        text: `SELECT ${MEMORY_COLUMNS} FROM reach_memory_fts f JOIN reach_memory m ON m.id = f.rowid
               WHERE reach_memory_fts MATCH $1 AND m.tenant_id = $2 AND m.owner = $3
               ORDER BY m.updated_at DESC, m.id DESC LIMIT $4`,
        values: [words.map((w) => `"${w}"`).join(' '), tenant, owner, limit],
      }
    : {
        text: `SELECT ${MEMORY_COLUMNS} FROM reach_memory m
               WHERE m.body_tsv @@ plainto_tsquery('simple', $1) AND m.tenant_id = $2 AND m.owner = $3
               ORDER BY m.updated_at DESC, m.id DESC LIMIT $4`,
        values: [words.join(' '), tenant, owner, limit],
      };

/** The newest touches of every caller, optionally of one tool (the console's Tools page). */
export const selectRecentTouches = (tenant: string, tool: string | undefined, limit: number) => ({
  text: `SELECT ${TOUCH_COLUMNS} FROM reach_touches WHERE tenant_id = $1 AND ($2 = '' OR tool = $2)
         ORDER BY created_at DESC, request_id DESC LIMIT $3`,
  values: [tenant, tool ?? '', limit],
});
