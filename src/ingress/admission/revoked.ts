import { causedBy, type Envelope } from '../../envelope/index.js';
import type { Services } from '../../kernel/module.js';
import type { Db } from '../../store/port.js';
import { clearRevoked, markRevoked, selectIntegration } from '../sql.js';
import type { FetchOutcome } from './fetch.js';

/** What admission does with a source whose credential may be revoked. */
export type RevokedCheck =
  | { kind: 'usable' }
  | { kind: 'revoked'; detail: { credential_reason: string; since: string; trigger_refused?: string } };

/**
 * A credential revoked at the provider (a trigger's re-read answered 401) marks its source `revoked`
 * (`ingress_integrations`), appends `integration.credential.revoked` once — notify alerts on it — and
 * from then on admission derives no task from the source: every delivery is stored and dropped
 * `credential_revoked`. A later re-read that succeeds (the token was replaced and the gateway
 * restarted) clears the mark with `integration.credential.restored`. Runs in admission's transaction.
 */
export async function checkRevoked(
  services: Services,
  tx: Db,
  event: Envelope,
  source: string,
  fetched: ReadonlyMap<string, FetchOutcome>,
  now: number,
): Promise<RevokedCheck> {
  const refused = [...fetched.entries()].find(([, o]) => o.kind === 'revoked');
  if (refused) {
    const [trigger, outcome] = refused;
    const reason = outcome.kind === 'revoked' ? outcome.reason : 'revoked';
    const marked = await tx.query(markRevoked({ source, reason, since: now, eventId: event.event_id }));
    if (marked.length > 0) {
      await services.emit(
        causedBy(event, {
          type: 'integration.credential.revoked',
          redacted_summary: { source, trigger, reason },
          subject: { action: 'revoke', resource_ref: source },
        }),
        tx,
      );
    }
    return {
      kind: 'revoked',
      detail: { credential_reason: reason, since: new Date(now).toISOString(), trigger_refused: trigger },
    };
  }
  const [row] = await tx.query<{ reason: string; since: number | string }>(selectIntegration(source));
  if (!row) return { kind: 'usable' };
  if ([...fetched.values()].some((o) => o.kind === 'fetched')) {
    await tx.query(clearRevoked(source));
    await services.emit(
      causedBy(event, {
        type: 'integration.credential.restored',
        redacted_summary: { source, revoked_since: new Date(Number(row.since)).toISOString() },
        subject: { action: 'restore', resource_ref: source },
      }),
      tx,
    );
    return { kind: 'usable' };
  }
  return {
    kind: 'revoked',
    detail: { credential_reason: row.reason, since: new Date(Number(row.since)).toISOString() },
  };
}
