import { port } from '../kernel/port.js';

/** Whose spending a decision is about. */
export interface BudgetScope {
  tenant_id: string;
  /** The asking key's name (null: no agent, the tenant's budget only). */
  agent_id: string | null;
  task_id: string | null;
  session_id: string | null;
}

/**
 * Budget counters for CEL's `budgets` map beside the gate's own (`steps`, `wall_time_seconds`): e.g.
 * `tokens_left_today`, `cost_left_today`. The gate owns this interface and reads it when a module
 * provides one (the cost ledger, src/costs); without one, `budgets` holds the gate's counters only.
 */
export interface BudgetFacts {
  facts(scope: BudgetScope, now: number): Promise<Record<string, number>>;
}

export const budgetFactsPort = port<BudgetFacts>('gate.budgets');
