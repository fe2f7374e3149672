/**
 * `switchboard outbox dead|replay`: the outbox's dead letters over the admin API — events a relay
 * subscriber failed on until the relay parked them, with the subscriber and its version — and putting
 * them back for the relay once that subscriber is fixed.
 */

import { gatewayCall } from './client.js';

export interface OutboxCliOptions {
  limit?: string;
  id?: string[];
  all?: boolean;
  json?: boolean;
  url?: string;
  env?: NodeJS.ProcessEnv;
  out?: (line: string) => void;
}

interface DeadRowJson {
  id: number;
  event_id: string;
  type: string | null;
  attempts: number;
  consumer: string | null;
  consumer_version: string | null;
  dead_at: string | null;
  last_error: string | null;
}

const messages = {
  roles: ['admin'] as const,
  forbidden: () => 'the outbox needs an admin key (SWITCHBOARD_KEY)',
};

function print(opts: OutboxCliOptions, line: string): void {
  (opts.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
}

/** One line per dead row: id, event, type, consumer@version, attempts, when, the last error. */
export async function dead(opts: OutboxCliOptions = {}): Promise<DeadRowJson[]> {
  const q = opts.limit ? `?${new URLSearchParams({ limit: opts.limit })}` : '';
  const { rows } = (await gatewayCall('GET', `/v1/outbox/dead${q}`, opts, {
    ...messages,
    roles: [...messages.roles],
  })) as { rows: DeadRowJson[] };
  if (opts.json) print(opts, JSON.stringify(rows, null, 2));
  else
    for (const r of rows)
      print(
        opts,
        [
          r.id,
          r.event_id,
          r.type ?? '-',
          `${r.consumer ?? '?'}@${r.consumer_version ?? '-'}`,
          `attempts=${r.attempts}`,
          r.dead_at ?? '-',
          r.last_error ?? '',
        ].join('\t'),
      );
  return rows;
}

export async function replay(opts: OutboxCliOptions = {}): Promise<void> {
  const ids = (opts.id ?? []).map((v) => {
    if (!/^\d+$/.test(v))
      throw new Error(`--id ${v}: an outbox row id is a whole number (switchboard outbox dead)`);
    return Number(v);
  });
  if (ids.length === 0 && !opts.all) throw new Error('name what to replay: --id <n> (repeatable) or --all');
  if (ids.length > 0 && opts.all) throw new Error('--id and --all exclude each other');
  const result = (await gatewayCall(
    'POST',
    '/v1/outbox/replay',
    opts,
    { ...messages, roles: [...messages.roles] },
    opts.all ? { all: true } : { ids },
  )) as { replayed: number[]; not_dead?: number[] };
  if (opts.json) print(opts, JSON.stringify(result, null, 2));
  else {
    print(opts, `replayed ${result.replayed.length}`);
    for (const id of result.not_dead ?? []) print(opts, `not dead (left alone): ${id}`);
  }
}
