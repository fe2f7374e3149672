import type { BudgetFacts, BudgetScope } from '../gate/budgets.js';
import type { Db } from '../store/port.js';
import type { Budget, CostsConfig } from './config.js';
import { dayOf } from './day.js';
import { daySpend } from './sql.js';

interface Spend {
  tokens: number;
  cost: number;
}

/**
 * The gate's budget facts from the ledger: today's (UTC) spend of the asking agent and what is left of
 * the smaller of its own budget and the tenant's. Only the keys of a budget that applies are set, so a
 * rule reads `has(budgets.tokens_left_today) && budgets.tokens_left_today <= 0`.
 */
export class BudgetBook implements BudgetFacts {
  constructor(
    private readonly db: Db,
    private readonly config: () => CostsConfig,
  ) {}

  /** The budget of `agent`: its own entry, else `default_agent`. */
  agentBudget(agent: string | null): Budget | undefined {
    const b = this.config().budgets;
    if (agent === null) return undefined;
    return b.agents[agent] ?? b.default_agent;
  }

  async facts(scope: BudgetScope, now: number): Promise<Record<string, number>> {
    const tenantBudget = this.config().budgets.tenant;
    const agentBudget = this.agentBudget(scope.agent_id);
    if (!tenantBudget && !agentBudget) return {};
    const day = dayOf(now);
    const agentSpend =
      scope.agent_id !== null
        ? await this.spend(scope.tenant_id, day, scope.agent_id)
        : { tokens: 0, cost: 0 };
    const out: Record<string, number> = { tokens_today: agentSpend.tokens, cost_today: agentSpend.cost };
    const left = (budget: Budget | undefined, spend: Spend) => {
      if (!budget) return;
      if (budget.tokens_per_day !== undefined)
        out['tokens_left_today'] = Math.min(
          out['tokens_left_today'] ?? Infinity,
          budget.tokens_per_day - spend.tokens,
        );
      if (budget.cost_per_day !== undefined)
        out['cost_left_today'] = Math.min(
          out['cost_left_today'] ?? Infinity,
          budget.cost_per_day - spend.cost,
        );
    };
    left(agentBudget, agentSpend);
    if (tenantBudget) left(tenantBudget, await this.spend(scope.tenant_id, day));
    return out;
  }

  private async spend(tenant: string, day: string, agent?: string): Promise<Spend> {
    const [row] = await this.db.query<{ tokens: number | string; cost_micros: number | string }>(
      daySpend(tenant, day, agent),
    );
    return { tokens: Number(row?.tokens ?? 0), cost: Number(row?.cost_micros ?? 0) / 1e6 };
  }
}
