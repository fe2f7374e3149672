import type { Envelope, EnvelopeInput } from '../envelope/index.js';
import type { Db } from '../store/port.js';
import type { SignalsConfig } from './config.js';
import * as q from './sql.js';

/** The tenant's own row: used when a signal names no owner, and by the API when no owner is given. */
export const TENANT_OWNER = '';

export interface AwayView {
  owner: string;
  /** What a person switched. */
  away: boolean;
  /** What counts now: the switch, or the automatic rule. */
  effective: boolean;
  reason: 'switched_on' | 'switched_off' | 'no_input' | 'never_set';
  changed_at: string | null;
  changed_by: string | null;
  auto_after_idle_seconds: number | null;
  last_input_at: string | null;
}

/** Pure: whether the owner is away now, from the stored row and the automatic rule. */
export function awayView(
  row: q.AwayRow | undefined,
  lastInput: number | null,
  owner: string,
  cfg: SignalsConfig,
  now: number,
): AwayView {
  const auto = cfg.away.auto_after_idle_seconds;
  const switched = row ? Number(row.away) === 1 : false;
  // No typed prompt on record counts as quiet: a gateway that never saw one has nobody at the desk.
  const quiet = auto !== undefined && (lastInput === null || now - lastInput >= auto * 1000);
  const effective = switched || quiet;
  const reason: AwayView['reason'] = switched
    ? 'switched_on'
    : quiet
      ? 'no_input'
      : row && row.changed_by !== ''
        ? 'switched_off'
        : 'never_set';
  return {
    owner,
    away: switched,
    effective,
    reason,
    changed_at: row && row.changed_by !== '' ? new Date(Number(row.changed_at)).toISOString() : null,
    changed_by: row && row.changed_by !== '' ? row.changed_by : null,
    auto_after_idle_seconds: auto ?? null,
    last_input_at: lastInput !== null ? new Date(lastInput).toISOString() : null,
  };
}

export async function readAway(db: Db, owner: string, cfg: SignalsConfig, now: number): Promise<AwayView> {
  const [tenant] = await db.query<q.AwayRow>(q.getAway(TENANT_OWNER));
  const own = owner === TENANT_OWNER ? tenant : (await db.query<q.AwayRow>(q.getAway(owner)))[0];
  // Typed input is recorded on the tenant's row (a prompt does not say who typed it).
  const lastInput = tenant?.last_input_at != null ? Number(tenant.last_input_at) : null;
  // An owner with no row of their own follows the tenant's switch.
  return { ...awayView(own ?? tenant, lastInput, owner, cfg, now), owner };
}

export async function switchAway(
  db: Db,
  owner: string,
  away: boolean,
  by: string,
  cfg: SignalsConfig,
  now: number,
): Promise<AwayView> {
  await db.query(q.setAway(owner, away, by, now));
  return readAway(db, owner, cfg, now);
}

/**
 * A person switches away mode: the switch and its `agent.away.changed` event commit together, so who
 * turned the phone on is never lost (`PUT /v1/away` and the console's switch both come here).
 */
export async function switchAndRecord(
  s: { db: Db; emit(input: EnvelopeInput, db?: Db): Promise<Envelope>; now(): number },
  cfg: SignalsConfig,
  owner: string,
  away: boolean,
  by: string,
): Promise<AwayView> {
  return s.db.tx(async (tx) => {
    const v = await switchAway(tx, owner, away, by, cfg, s.now());
    await s.emit(
      {
        type: 'agent.away.changed',
        actor: { user_id: by },
        redacted_summary: { owner, away, effective: v.effective },
      },
      tx,
    );
    return v;
  });
}
