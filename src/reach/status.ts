import type { Vault } from '../log/vault.js';
import { approvalRequired, storedResponse } from './events.js';
import type { TouchError, TouchResponse } from './protocol.js';
import type { TouchRow } from './sql.js';

/** After a touch's deadline, how long before a still-`running` row reads as interrupted. */
export const INTERRUPTED_GRACE_MS = 30_000;

const STOPPED = 'the gateway stopped while this touch ran; call it again with a new request_id';

/**
 * GET /v1/touch/{id}: where a touch is, and its stored answer when done. Reads only — a row left
 * `running` by a gateway that stopped is reported failed here without being written (the sweep
 * worker writes it).
 */
export async function describeTouch(row: TouchRow, now: number, vault: Vault): Promise<TouchResponse> {
  const age = now - row.created_at;
  if (row.status === 'running' || row.status === 'awaiting_approval') {
    if (row.status === 'running' && now > row.deadline_at + INTERRUPTED_GRACE_MS)
      return {
        request_id: row.request_id,
        ok: false,
        status: 'failed',
        error: { code: 'TIMEOUT', message: STOPPED },
        cost_ms: age,
      };
    return {
      request_id: row.request_id,
      ok: row.status === 'running',
      status: row.status,
      cost_ms: age,
      ...(row.status === 'awaiting_approval' && row.approval_id
        ? { error: approvalRequired(row.approval_id, 'PENDING', row.request_id) }
        : {}),
    };
  }
  const status = row.status as 'done' | 'failed';
  const stored = row.response_ref ? await vault.get(row.response_ref) : undefined;
  if (stored) return { ...storedResponse(JSON.parse(stored.toString('utf8'))), status };
  const error: TouchError | undefined = row.error_code
    ? {
        code: row.error_code as TouchError['code'],
        message: row.response_ref ? 'the stored answer has expired' : STOPPED,
      }
    : undefined;
  return {
    request_id: row.request_id,
    ok: status === 'done',
    status,
    cost_ms: row.cost_ms ?? 0,
    ...(error ? { error } : {}),
  };
}
