/**
 * `switchboard approvals list|approve|reject`: a client of the gateway's HTTP API (it does not open
 * the store), so it works against a remote gateway and goes through the same checks as anyone else.
 */

import { gatewayCall } from './client.js';

export interface ApprovalsCliOptions {
  /** Only approvals in this state (`list`); default pending. */
  state?: string;
  /** Reason recorded with the decision. */
  comment?: string;
  /** Print JSON instead of one line per approval. */
  json?: boolean;
  /** Overrides `SWITCHBOARD_URL`. */
  url?: string;
  /** Injected in tests; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Injected in tests; default stdout. */
  out?: (line: string) => void;
}

export { DEFAULT_URL } from './client.js';

interface ApprovalJson {
  id: string;
  status: string;
  action: string;
  requested_by: string;
  task_id: string | null;
  expires_at: string;
  decided_by: string | null;
  capability?: { id: string };
  recheck?: { outcome: string; reason_code: string } | null;
}

/** One line per approval: id, status, who asked, until when, and what. */
export function formatApproval(a: ApprovalJson): string {
  const who = a.task_id ? `${a.requested_by}/${a.task_id}` : a.requested_by;
  const when = a.status === 'pending' ? `expires ${a.expires_at}` : a.decided_by ? `by ${a.decided_by}` : '';
  const cap = a.capability
    ? ` capability ${a.capability.id}`
    : a.recheck?.outcome === 'no_capability'
      ? ` no capability (${a.recheck.reason_code})`
      : '';
  return `${a.id}  ${a.status.padEnd(8)}  ${who}  ${when}  ${JSON.stringify(a.action)}${cap}`.replace(
    / {3,}/g,
    '  ',
  );
}

function call(method: string, path: string, opts: ApprovalsCliOptions, body?: unknown): Promise<unknown> {
  return gatewayCall(
    method,
    path,
    opts,
    {
      roles: ['approver', 'admin'],
      forbidden: (error) =>
        error?.code === 'self_approval'
          ? 'an agent key cannot decide approvals; use an approver or admin key'
          : `this key may not do that: ${error?.message ?? 'forbidden'}`,
    },
    body,
  );
}

function print(opts: ApprovalsCliOptions, line: string): void {
  (opts.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
}

export async function list(opts: ApprovalsCliOptions = {}): Promise<void> {
  const state = opts.state ?? 'pending';
  const query = state === 'all' ? '' : `?state=${encodeURIComponent(state)}`;
  const body = (await call('GET', `/v1/approvals${query}`, opts)) as { approvals: ApprovalJson[] };
  if (opts.json) {
    for (const a of body.approvals) print(opts, JSON.stringify(a));
    return;
  }
  if (body.approvals.length === 0) print(opts, `no ${state === 'all' ? '' : `${state} `}approvals`);
  for (const a of body.approvals) print(opts, formatApproval(a));
}

async function decide(id: string, decision: 'approve' | 'reject', opts: ApprovalsCliOptions): Promise<void> {
  if (!/^apr_[0-9A-Z]{26}$/.test(id)) throw new Error(`${JSON.stringify(id)} is not an approval id (apr_…)`);
  const body = {
    decision,
    ...(opts.comment !== undefined ? { comment: opts.comment } : {}),
  };
  const a = (await call('POST', `/v1/approvals/${id}/decision`, opts, body)) as ApprovalJson;
  print(opts, opts.json ? JSON.stringify(a) : formatApproval(a));
}

export function approve(id: string, opts: ApprovalsCliOptions = {}): Promise<void> {
  return decide(id, 'approve', opts);
}

export function reject(id: string, opts: ApprovalsCliOptions = {}): Promise<void> {
  return decide(id, 'reject', opts);
}
