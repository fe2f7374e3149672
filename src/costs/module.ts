import { type Deps, defineModule } from '../kernel/module.js';
import { budgetFactsPort } from '../gate/budgets.js';
import { BudgetBook } from './budgets.js';
import { costsConfigSchema } from './config.js';
import { accepts, Ledger, SUBSCRIBER } from './ledger.js';
import { costsRoutes } from './routes.js';

const requires = {};
const sections = { costs: costsConfigSchema.prefault({}) };
export type CostsDeps = Deps<typeof requires, typeof sections>;

/**
 * The cost ledger (docs/costs.md): a relay projection of turns, tool calls, wall time and, where the
 * runtime's transcript shows them, tokens and their price, per UTC day, agent, task and session;
 * `GET /v1/costs`; and the gate's budget facts (`budgets.tokens_left_today`, `cost_left_today`).
 */
export function costsModule() {
  let ledger: Ledger | undefined;
  return defineModule({
    name: 'costs',
    config: sections,
    requires,
    provides: [budgetFactsPort],
    migrations: new URL('./migrations/', import.meta.url),
    routes(app, s) {
      costsRoutes(app, s);
    },
    start(s) {
      const config = () => s.config.costs;
      ledger = new Ledger({ db: s.db, vault: s.vault, logger: s.logger, now: s.now, config });
      s.provide(budgetFactsPort, new BudgetBook(s.db, config));
    },
    subscribers() {
      const l = ledger!;
      return [{ name: SUBSCRIBER, ownsInbox: true, accepts, handle: (e) => l.handle(e) }];
    },
    stop() {
      ledger = undefined;
    },
  });
}
