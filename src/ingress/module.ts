import { type Deps, defineModule, type Module } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { tasksPort } from '../tasks/port.js';
import { gatePort } from '../gate/port.js';
import { clusterPort } from '../cluster/port.js';
import { type AdmissionDeps, admit } from './admission/admit.js';
import { liveEgress } from '../egress/index.js';
import { fetchAuthoritative } from './admission/fetch.js';
import { type LoopConfig, loopSchema } from './admission/config.js';
import { checkTriggerSources, checkTrustedProxies, triggersSectionSchema } from './config.js';
import { addressList } from './pipeline/binding.js';
import { Launcher, TASK_TERMINAL_TYPES } from './admission/launcher.js';
import { type CompiledTrigger, compileTriggers } from './admission/triggers.js';
import { ingressSourcesSchema } from './config.js';
import { dlqRoute } from './pipeline/dlq.js';
import { replayRoute } from './pipeline/replay.js';
import { type IngressState, ingressRoute, type RouteSource, retentionMs } from './pipeline/route.js';
import { RetentionWorker } from './retention.js';
import type { SecretLookup } from './source.js';
import { createSource } from './sources/index.js';

/** Retention is a singleton: it runs on the cluster's leader (docs/scale.md). */
const requires = { tasks: optional(tasksPort), gate: optional(gatePort), cluster: optional(clusterPort) };
const sections = {
  sources: ingressSourcesSchema.default({}),
  triggers: triggersSectionSchema,
  loop: loopSchema.prefault({}),
};
/** The core, `sources`/`triggers`/`loop`, and the tasks module when it runs (it launches admitted runs). */
export type IngressDeps = Deps<typeof requires, typeof sections>;

export interface IngressOptions {
  /** Where `*_env` secrets are read; default `process.env`. */
  secrets?: SecretLookup;
  /** Overrides for the `loop` section (tests). */
  loop?: Partial<LoopConfig>;
  /** false: no timers (tests drive `launchDue` and `purgeExpired` themselves). */
  workers?: boolean;
}

export interface IngressModule extends Module<typeof requires, typeof sections> {
  /** Launches the admitted runs that are due now; returns how many. */
  launchDue(): Promise<number>;
  /** The retention worker's hourly pass, on demand. */
  purgeExpired(): Promise<{ payloads: number; deliveries: number }>;
}

/**
 * Webhook ingress: `POST /v1/ingress/:source` (verify, persist, 202), admission as a relay subscriber
 * (filter, loop guard, coalescing, budgets), a launcher that hands admitted runs to `services.tasks`,
 * replay, and the payload retention worker.
 */
export function ingressModule(opts: IngressOptions = {}): IngressModule {
  let state: IngressState | undefined;
  let triggers: CompiledTrigger[] = [];
  let triggersById = new Map<string, CompiledTrigger>();
  let loop: LoopConfig = loopSchema.parse({});
  let launcher: Launcher | undefined;
  let retention: RetentionWorker | undefined;
  let admitWith: AdmissionDeps | undefined;

  const current = (): IngressState => {
    if (!state) throw new Error('the ingress module has not started');
    return state;
  };

  return {
    ...defineModule({
      name: 'ingress',
      config: sections,
      checkConfig: (c) => [...checkTriggerSources(c), ...checkTrustedProxies(c)],
      requires,
      migrations: new URL('./migrations/', import.meta.url),
    }),
    routes(app, services) {
      ingressRoute(app, services, current);
      replayRoute(app, services);
      dlqRoute(app, services);
    },
    start(services) {
      const secrets = opts.secrets ?? ((name: string) => process.env[name]);
      const parsed = services.config.sources;
      const sources = new Map<string, RouteSource>();
      // Re-reads and a sender's JWKS go through the egress allow-list like every other outbound request.
      const egress = liveEgress(services);
      for (const [name, entry] of Object.entries(parsed)) {
        sources.set(name, {
          name,
          type: entry.source.type,
          tenant: entry.tenant ?? services.config.tenant.id,
          verifier: createSource(entry.source, secrets, { egress }),
          ...(entry.allow_ips ? { allow: addressList(entry.allow_ips) } : {}),
          ...(entry.tenants ? { tenants: entry.tenants } : {}),
        });
      }
      const days = services.config.vault.retention_days;
      const proxies = services.config.server.trusted_proxies;
      state = {
        sources,
        retentionMs: retentionMs(days),
        ...(proxies.length > 0 ? { trustedProxies: addressList(proxies) } : {}),
      };
      triggers = compileTriggers(services.config.triggers, new Set(sources.keys()));
      triggersById = new Map(triggers.map((t) => [t.config.id, t]));
      loop = { ...services.config.loop, ...opts.loop };

      const fetchDeps = {
        egress,
        env: (name: string) => process.env[name],
      };
      const run = new Launcher(services, () => triggersById, opts.workers !== false);
      launcher = run;
      retention = new RetentionWorker(
        services,
        () => retentionMs(days),
        () => services.cluster,
      );
      admitWith = {
        services,
        triggers: () => triggers,
        loop: () => loop,
        sourceType: (n) => sources.get(n)?.type,
        fetch: (config, payload) => fetchAuthoritative(config, payload, fetchDeps),
      };
      if (opts.workers !== false) {
        run.start();
        retention.start();
      }
    },
    subscribers() {
      const run = launcher!;
      const deps = admitWith!;
      return [
        {
          name: 'admission',
          accepts: (t) => t === 'integration.webhook.accepted',
          // `admit` keeps its own inbox: the delivery's `processed` mark, written with its decisions.
          ownsInbox: true,
          handle: async (event) => {
            const decisions = await admit(deps, event);
            if (decisions?.some((d) => d.kind === 'admitted')) run.kick();
          },
        },
        {
          name: 'ingress.runs',
          accepts: (t) => TASK_TERMINAL_TYPES.has(t),
          handle: (event) => run.taskEnded(event),
        },
      ];
    },
    async stop() {
      await retention?.stop();
      await launcher?.stop();
    },
    launchDue: () => (launcher ? launcher.runDue() : Promise.resolve(0)),
    purgeExpired: () => (retention ? retention.runOnce() : Promise.resolve({ payloads: 0, deliveries: 0 })),
  };
}
