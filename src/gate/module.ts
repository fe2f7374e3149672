import { existsSync } from 'node:fs';
import { AppError } from '../errors/index.js';
import { type ApprovalService, approvalsPort } from '../approvals/port.js';
import { type Deps, defineModule, type Module } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { tasksPort } from '../tasks/port.js';
import { budgetFactsPort } from './budgets.js';
import { policyConfigShape } from './config.js';
import { Breaker, BREAKER_SUBSCRIBER } from './breaker/breaker.js';
import { type BreakersConfig, breakersSchema } from './breaker/config.js';
import type { PolicySource } from './load.js';
import { gatePort, type IntentReader, planRecheckOf } from './port.js';
import {
  configPolicySources,
  PolicyHolder,
  type PolicyStatus,
  type ReloadOutcome,
} from './service/holder.js';
import { incidentRoutes } from './service/incident-routes.js';
import { IncidentStore } from './service/incidents-store.js';
import { HistoryStore } from './service/history-store.js';
import { deriveCapabilityKey } from './service/keys.js';
import { gateRoutes } from './service/routes.js';
import { Gate } from './service/service.js';
import { DEFAULT_WATCH_DEBOUNCE_MS, type FileWatch, watchFiles } from '../kernel/watch.js';
import type { CapabilityKey, CapabilitySigner } from './types.js';

const requires = {
  tasks: optional(tasksPort),
  approvals: optional(approvalsPort),
  /** Spending counters for CEL's `budgets` (the cost ledger, src/costs). */
  budgets: optional(budgetFactsPort),
};
const sections = { ...policyConfigShape, breakers: breakersSchema };
/** What the gate's parts receive: the core, `rules`/`policy_files`/`gate`, tasks and approvals if running. */
export type GateDeps = Deps<typeof requires, typeof sections>;

export interface GateModuleOptions {
  /** Where the rules come from; default the config file (or the parsed config section). */
  sources?: (s: GateDeps) => PolicySource[];
  /** The capability key; default derived from the vault key (service/keys.ts). `null`: no capabilities. */
  signerKey?: CapabilityKey | null;
  /** Reload when a policy file or the config file changes (default true). */
  watch?: boolean;
  watchDebounceMs?: number;
  /** Reload on SIGHUP (default true). */
  sighup?: boolean;
  /** The runtime adapters' classification (the app root passes `runtimeIntents`); without it an API intent with no `kind` is `other`. */
  intents?: IntentReader;
}

export interface GateModule extends Module<typeof requires, typeof sections> {
  /** What SIGHUP does: load the policy again; a broken one keeps the serving revision. */
  reload(): Promise<ReloadOutcome>;
  status(): PolicyStatus | undefined;
  service(): Gate | undefined;
}

interface Parts {
  holder: PolicyHolder;
  incidents: IncidentStore;
  signer: CapabilitySigner | undefined;
  gate: Gate;
}

/**
 * The policy gate: loads and reloads the policy, sets `services.gate`, and serves
 * `POST /v1/gate/evaluate`, `POST /v1/capabilities/verify`, `GET /v1/policy` and the incident API.
 */
export function gateModule(opts: GateModuleOptions = {}): GateModule {
  let parts: Parts | undefined;
  let watcher: FileWatch | undefined;
  let onHup: (() => void) | undefined;
  let loadedOnce = false;
  let recheckOwner: ApprovalService | undefined;
  let watched = (): string[] => [];
  let offBreakers: (() => void) | undefined;

  const ensure = (s: GateDeps): Parts => {
    if (parts) return parts;
    const holder = new PolicyHolder({
      sources: () => (opts.sources ?? configPolicySources)(s),
      emit: (e) => s.emit(e),
      logger: s.logger,
      now: s.now,
    });
    const incidents = new IncidentStore(s.db);
    const key = opts.signerKey === undefined ? deriveCapabilityKey(s.vaultKey) : opts.signerKey;
    // The TTL is left to the serving policy's `gate.capability_ttl_seconds`, so a reload can change it.
    const signer = key ? { keys: [key] } : undefined;
    const gate = new Gate({
      s,
      holder,
      incidents,
      signer,
      history: new HistoryStore(s.db),
      ...(opts.intents ? { intents: opts.intents } : {}),
    });
    parts = { holder, incidents, signer, gate };
    return parts;
  };
  const running = (): Parts => {
    if (!parts) throw new AppError('not_ready', 'the gate module has not started');
    return parts;
  };

  const reload = async (): Promise<ReloadOutcome> => {
    const p = running();
    const outcome = await p.holder.reload(loadedOnce ? 'manual' : 'start');
    watcher?.update(watched());
    return outcome;
  };

  return {
    ...defineModule({
      name: 'gate',
      config: sections,
      requires,
      provides: [gatePort],
      migrations: new URL('./migrations/', import.meta.url),
    }),
    reload,
    status: () => parts?.holder.status(),
    service: () => parts?.gate,
    routes(app, s) {
      ensure(s);
      gateRoutes(app, s, {
        gate: () => running().gate,
        holder: running().holder,
        incidents: () => running().incidents,
        signer: () => running().signer,
        ...(opts.intents ? { intents: opts.intents } : {}),
      });
      incidentRoutes(app, s, () => running().incidents);
    },
    async start(s) {
      const p = ensure(s);
      await p.holder.reload('start');
      loadedOnce = true;
      s.provide(gatePort, p.gate);
      // Approvals re-check an approved plan against the policy serving now, through this gate.
      recheckOwner = s.approvals;
      recheckOwner?.useRecheck?.(planRecheckOf(p.gate));
      const extra = existsSync(s.configSource) ? [s.configSource] : [];
      watched = () => [...extra, ...p.holder.watchedFiles()];
      const list = watched;
      if (opts.watch !== false) {
        watcher = watchFiles(() => {
          void p.holder.reload('watch').then(() => watcher?.update(list()));
        }, opts.watchDebounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS);
        watcher.update(list());
      }
      if (opts.sighup !== false) {
        onHup = () => {
          void p.holder.reload('sighup').then(() => watcher?.update(list()));
        };
        process.on('SIGHUP', onHup);
      }
    },
    // The automatic breaker to read-only (breaker/breaker.ts): counts decisions and delivery failures.
    // Its thresholds follow a config edit (SIGHUP, the file saved): `services.reloads` hands over the
    // whole parsed config, and the next counted event is judged by it (breaker.test.ts, "reloads").
    subscribers(s) {
      let breakers: BreakersConfig = s.config.breakers;
      offBreakers?.();
      offBreakers = s.reloads.onReload((c) => {
        breakers = (c as unknown as { breakers?: BreakersConfig }).breakers ?? breakers;
      });
      const breaker = new Breaker({ s, incidents: ensure(s).incidents, config: () => breakers });
      return [
        {
          name: BREAKER_SUBSCRIBER,
          accepts: (t) => breaker.accepts(t),
          handle: (event) => breaker.handle(event),
        },
      ];
    },
    stop() {
      offBreakers?.();
      offBreakers = undefined;
      recheckOwner?.useRecheck?.(undefined);
      recheckOwner = undefined;
      watcher?.close();
      watcher = undefined;
      if (onHup) process.off('SIGHUP', onHup);
      onHup = undefined;
    },
    notReady() {
      if (!parts || !loadedOnce) return undefined;
      const st = parts.holder.status();
      // Only a gate that never loaded is not ready; a broken reload keeps the old revision serving.
      if (st.revision === 'none') return `no policy loaded: ${st.last_error ?? 'unknown reason'}`;
      return undefined;
    },
  };
}
