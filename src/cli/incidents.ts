/**
 * `switchboard incidents freeze|unfreeze|revoke|list`: a client of the gateway's incident API (admin
 * key in SWITCHBOARD_KEY), so it works against a remote gateway and leaves the same audit trail.
 */

import { gatewayCall } from './client.js';

export interface IncidentsCliOptions {
  agent?: string;
  tenant?: string;
  task?: string;
  capability?: string;
  reason?: string;
  json?: boolean;
  /** Overrides `SWITCHBOARD_URL`. */
  url?: string;
  env?: NodeJS.ProcessEnv;
  out?: (line: string) => void;
}

function call(method: string, path: string, opts: IncidentsCliOptions, body?: unknown): Promise<unknown> {
  return gatewayCall(
    method,
    path,
    opts,
    {
      roles: ['admin'],
      forbidden: () => 'the incident API needs an admin key',
    },
    body,
  );
}

function print(opts: IncidentsCliOptions, line: string): void {
  (opts.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
}

function withReason(body: Record<string, string>, opts: IncidentsCliOptions): Record<string, string> {
  return opts.reason ? { ...body, reason: opts.reason } : body;
}

function scopeOf(
  opts: IncidentsCliOptions,
  allowed: readonly ('agent' | 'tenant' | 'task' | 'capability')[],
) {
  const given = allowed.filter((k) => opts[k] !== undefined);
  if (given.length !== 1) throw new Error(`name exactly one of ${allowed.map((k) => `--${k}`).join(', ')}`);
  return given[0]!;
}

async function freezeOrUnfreeze(path: 'freeze' | 'unfreeze', opts: IncidentsCliOptions): Promise<void> {
  const scope = scopeOf(opts, ['agent', 'tenant']) as 'agent' | 'tenant';
  const r = (await call(
    'POST',
    `/v1/incidents/${path}`,
    opts,
    withReason({ [scope]: opts[scope]! }, opts),
  )) as {
    changed: boolean;
  };
  const verb = path === 'freeze' ? 'frozen' : 'unfrozen';
  print(opts, `${scope} ${opts[scope]} ${r.changed ? verb : `was already ${verb}`}`);
}

export const freeze = (opts: IncidentsCliOptions) => freezeOrUnfreeze('freeze', opts);
export const unfreeze = (opts: IncidentsCliOptions) => freezeOrUnfreeze('unfreeze', opts);

export async function revoke(opts: IncidentsCliOptions): Promise<void> {
  const scope = scopeOf(opts, ['task', 'agent', 'tenant', 'capability']);
  const field = scope === 'task' ? 'task_id' : scope === 'capability' ? 'capability_id' : scope;
  const r = (await call(
    'POST',
    '/v1/incidents/revoke',
    opts,
    withReason({ [field]: opts[scope]! }, opts),
  )) as {
    id: string;
    revoked_at: string;
  };
  print(opts, `revoked every capability of ${scope} ${opts[scope]} issued up to ${r.revoked_at} (${r.id})`);
}

interface IncidentList {
  freezes: { scope: string; value: string; frozen_at: string; frozen_by: string; reason: string | null }[];
  revocations: { id: string; scope: string; value: string; revoked_at: string; revoked_by: string }[];
}

export async function list(opts: IncidentsCliOptions): Promise<void> {
  const r = (await call('GET', '/v1/incidents', opts)) as IncidentList;
  if (opts.json) return print(opts, JSON.stringify(r));
  if (r.freezes.length === 0) print(opts, 'nothing frozen');
  for (const f of r.freezes) {
    print(
      opts,
      `frozen ${f.scope} ${f.value} since ${f.frozen_at} by ${f.frozen_by}${f.reason ? `: ${f.reason}` : ''}`,
    );
  }
  for (const v of r.revocations)
    print(opts, `revoked ${v.scope} ${v.value} at ${v.revoked_at} by ${v.revoked_by}`);
}
