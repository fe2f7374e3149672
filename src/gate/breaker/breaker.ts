import { causedBy, type Envelope } from '../../envelope/index.js';
import type { Services } from '../../kernel/module.js';
import type { Db } from '../../store/port.js';
import type { FreezeScope, IncidentStore } from '../service/incidents-store.js';
import { agentLimits, type BreakersConfig, type Limits, longestWindowMs, tenantLimits } from './config.js';
import { describeTrip, figuresOf, judge } from './judge.js';
import { countHits, deleteHits, insertHit, lockScope, pruneHits } from './sql.js';

/** The relay subscriber's name keys its inbox: renaming it would count old events again. */
export const BREAKER_SUBSCRIBER = 'gate.breaker';
/** Who a breaker's freeze is by, in `freezes.frozen_by` and the events. */
export const BREAKER_ACTOR = 'breaker';

const COUNTED = new Set([
  'agent.tool.authorized',
  'agent.tool.denied',
  'agent.tool.deferred',
  'integration.delivery.failed',
  'integration.delivery.dead',
]);

/** A delivery's agent is on the report it carries, two causes up (report → sent → attempt). */
const MAX_CAUSE_STEPS = 3;

type HitKind = 'side_effect' | 'authorized' | 'denied' | 'deferred' | 'delivery_failure';

/** What one event counts as; `side_effect`: authorized and not read-only (the gate's high risk). */
function hitKind(e: Envelope): HitKind | undefined {
  switch (e.type) {
    case 'agent.tool.authorized':
      return e.policy.risk === 'low' ? 'authorized' : 'side_effect';
    case 'agent.tool.denied':
      return 'denied';
    case 'agent.tool.deferred':
      return 'deferred';
    case 'integration.delivery.failed':
      return 'delivery_failure';
    case 'integration.delivery.dead':
      // A send refused because its channel's credential is revoked is the channel's fault, not the
      // agent's: one alert covers it (docs/delivery.md, "Revoked channels").
      return e.redacted_summary['channel_revoked'] === true ? undefined : 'delivery_failure';
    default:
      return undefined;
  }
}

export interface BreakerDeps {
  s: Pick<Services, 'db' | 'log' | 'emit' | 'now' | 'logger'>;
  incidents: IncidentStore;
  config: () => BreakersConfig;
}

/**
 * The automatic breaker to read-only: counts each agent's and the tenant's decisions and delivery
 * failures in a window, and when one crosses its `breakers:` threshold, freezes it (the same freeze a
 * person sets with `switchboard incidents freeze`) with `agent.breaker.tripped` naming the figures and
 * the event that crossed the line. Nothing is counted for a scope while it is frozen, and a trip clears
 * its counts, so after `switchboard incidents unfreeze` it is judged afresh.
 */
export class Breaker {
  constructor(private readonly d: BreakerDeps) {}

  accepts(type: string): boolean {
    const cfg = this.d.config();
    return (
      COUNTED.has(type) &&
      (cfg.agent !== undefined || cfg.tenant !== undefined || Object.keys(cfg.agents).length > 0)
    );
  }

  async handle(event: Envelope): Promise<void> {
    const kind = hitKind(event);
    if (!kind) return;
    const cfg = this.d.config();
    const scopes: { scope: FreezeScope; value: string; limits: Limits }[] = [];
    const agent = await this.agentOf(event);
    const mine = agent ? agentLimits(cfg, agent) : undefined;
    if (agent && mine && !(await this.d.incidents.isFrozen(event.tenant_id, agent)))
      scopes.push({ scope: 'agent', value: agent, limits: mine });
    const whole = tenantLimits(cfg);
    if (whole && !(await this.d.incidents.isFrozen(event.tenant_id, null)))
      scopes.push({ scope: 'tenant', value: event.tenant_id, limits: whole });
    if (scopes.length === 0) return;
    const at = Date.parse(event.occurred_at);
    const keep = longestWindowMs(cfg);
    await this.d.s.db.tx(async (tx) => {
      for (const { scope, value, limits } of scopes) {
        if (tx.dialect === 'postgres') await tx.query(lockScope(scope, value));
        const fresh = await tx.query(insertHit({ scope, value, eventId: event.event_id, kind, at }));
        if (fresh.length === 0) continue;
        await tx.query(pruneHits(scope, value, at - keep));
        const rows = await tx.query<{ kind: string; n: number | string }>(
          countHits(scope, value, at - limits.window_seconds * 1000),
        );
        const figures = figuresOf(new Map(rows.map((r) => [r.kind, Number(r.n)])));
        const crossed = judge(figures, limits);
        if (!crossed) continue;
        const reason = `breaker: ${describeTrip(crossed, figures, limits.window_seconds)}`;
        const frozen = await this.d.incidents.freeze(tx, {
          scope,
          value,
          by: BREAKER_ACTOR,
          reason,
          now: this.d.s.now(),
        });
        await tx.query(deleteHits(scope, value));
        if (!frozen) continue;
        await this.trip(tx, event, { scope, value, limits, figures, crossed, reason });
      }
    });
  }

  private async trip(
    tx: Db,
    cause: Envelope,
    t: {
      scope: FreezeScope;
      value: string;
      limits: Limits;
      figures: ReturnType<typeof figuresOf>;
      crossed: NonNullable<ReturnType<typeof judge>>;
      reason: string;
    },
  ): Promise<void> {
    const { scope, value, figures, crossed, limits } = t;
    const denied_ratio =
      figures.decisions > 0 ? Math.round((figures.denied / figures.decisions) * 1000) / 1000 : 0;
    const tripped = await this.d.s.emit(
      causedBy(cause, {
        type: 'agent.breaker.tripped',
        actor: { agent_id: scope === 'agent' ? value : null },
        redacted_summary: {
          scope,
          value,
          metric: crossed.metric,
          observed: crossed.observed,
          limit: crossed.limit,
          window_seconds: limits.window_seconds,
          figures: { ...figures, denied_ratio },
          tripped_by: { event_id: cause.event_id, type: cause.type },
          reason: t.reason,
          lift: `switchboard incidents unfreeze --${scope} ${value}`,
        },
      }),
      tx,
    );
    await this.d.s.emit(
      causedBy(tripped, {
        type: 'agent.agent.frozen',
        actor: { agent_id: scope === 'agent' ? value : null },
        redacted_summary: {
          scope,
          value,
          by: BREAKER_ACTOR,
          reason: t.reason,
          breaker_event_id: tripped.event_id,
        },
      }),
      tx,
    );
  }

  /** The agent behind an event: its actor, else the nearest cause's (a decision's request, a delivery's report). */
  private async agentOf(event: Envelope): Promise<string | null> {
    let e: Envelope | undefined = event;
    for (let i = 0; e && i <= MAX_CAUSE_STEPS; i++) {
      if (e.actor.agent_id) return e.actor.agent_id;
      if (!e.causation_id) return null;
      e = (await this.d.s.log.get(e.causation_id))?.envelope;
    }
    return null;
  }
}
