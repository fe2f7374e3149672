import type { GateDecision } from '../port.js';

/** Plans held at once; past it the oldest hold is dropped (its retry is then decided afresh). */
const MAX_HOLDS = 10_000;

/**
 * What `defer` promises: a plan deferred until `retry_after` stays deferred until then, so an agent
 * that retries at once gets the same answer (and the same time) instead of a fresh decision each
 * time; a retry after it is decided afresh. Held per session (or task, or agent) and plan digest, in
 * memory: a restart decides a retry afresh, which is what the wait was for anyway.
 */
export class Deferrals {
  private readonly holds = new Map<string, { until: number; decision: GateDecision }>();

  /**
   * The decision to give for `fresh` (just evaluated) at `now`: the held defer while it lasts, else
   * `fresh`, which is held in turn when it defers.
   */
  apply(key: string, fresh: GateDecision, now: number): { decision: GateDecision; held: boolean } {
    const hold = this.holds.get(key);
    if (hold && now < hold.until) return { decision: { ...hold.decision }, held: true };
    if (hold) this.holds.delete(key);
    if (fresh.decision === 'defer' && fresh.retry_after) {
      this.holds.set(key, { until: Date.parse(fresh.retry_after), decision: { ...fresh } });
      if (this.holds.size > MAX_HOLDS) this.holds.delete(this.holds.keys().next().value!);
    }
    return { decision: fresh, held: false };
  }
}
