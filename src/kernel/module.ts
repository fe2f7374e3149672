import type { Hono } from 'hono';
import type { ConfigReloads } from './reload.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { ConfigProblem } from '../config/load.js';
import type { CoreConfig } from '../config/schema.js';
import type { Envelope, EnvelopeInput } from '../envelope/index.js';
import type { EventLog } from '../log/log.js';
import type { Relay, Subscriber } from '../log/relay.js';
import type { Vault } from '../log/vault.js';
import type { MigrationFolder } from '../store/migrate.js';
import type { Db } from '../store/port.js';
import type { KeyRing } from './auth.js';
import type { Metrics } from './metrics.js';
import type { Port, Requirement, Resolved } from './port.js';
import type { WorkerSpec } from './worker.js';

export type Role = 'admin' | 'agent' | 'approver';

/** Who is calling: resolved from the bearer key by the auth middleware. */
export interface Principal {
  name: string;
  role: Role;
  /** A key scoped to one task (issued to a launched agent) carries it; the task comes from here, never the body. */
  task_id?: string;
}

export interface AppEnv {
  Variables: {
    principal: Principal;
    requestId: string;
    /** Set when a body was left unread past the drain bounds: the answer ends the connection (body.ts). */
    closeConnection?: boolean;
  };
}

export type App = Hono<AppEnv>;

/**
 * What every module gets: the core. Built once at start-up; modules never construct their own. Services
 * of other modules are not here: a module names the ports it needs in its manifest's `requires` and
 * receives exactly those, typed, beside these (see `Deps`).
 */
export interface Services {
  /** The core sections; a module's own sections are added to its `deps.config` (see `Deps`). */
  config: CoreConfig;
  db: Db;
  log: EventLog;
  vault: Vault;
  /**
   * The vault key, resolved once at start (env or the data dir's `vault.key`). Modules derive their own
   * keys from it with HKDF and a label of their own (capability tokens, approval and reply links), so
   * replicas that share the vault key accept each other's tokens. Never log it.
   */
  vaultKey: Uint8Array;
  relay: Relay;
  logger: Logger;
  metrics: Metrics;
  keys: KeyRing;
  /** Where this process found its config (a path, or `built-in defaults`). */
  configSource: string;
  /** Milliseconds since the epoch; injected so tests can move time. */
  now: () => number;
  /**
   * Aborted when the server begins to stop, before it waits for requests in flight: a request held on
   * something slow (a hook waiting for its approval) ends early instead of holding the shutdown.
   */
  stopping: AbortSignal;
  /** Config edits while running (SIGHUP, the config file changed): `egress.allow` is read live through it. */
  reloads: ConfigReloads;
  /** Appends an event (and its outbox row) using the configured tenant and environment. */
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
}

/** The top-level config keys a module owns, each with its strict schema (defaults included). */
export type Sections = Record<string, z.ZodType>;

export type SectionValues<C> = { readonly [K in keyof C]: C[K] extends z.ZodType ? z.output<C[K]> : never };

/** What a module's `routes`, `start` and `subscribers` receive: the core, its config, its ports. */
export type Deps<R = Record<never, Requirement>, C = Record<never, z.ZodType>> = Omit<Services, 'config'> & {
  config: CoreConfig & SectionValues<C>;
  /** Sets a port this module declared in `provides`; the kernel checks every declared one was set. */
  provide<T>(port: Port<T>, impl: T): void;
} & Resolved<R>;

/**
 * A module's manifest (after Fastify plugins and Backstage's backend system): what it owns, what it
 * offers, what it needs. The kernel assembles the config schema from `config`, collects `migrations`,
 * orders start-up by `requires` (a cycle or a missing provider stops start-up naming both modules),
 * mounts `routes`, starts, subscribes `subscribers` to the relay, runs `workers`, and stops in reverse
 * order (a module's workers first).
 *
 * Ports are read when used (`deps.gate.evaluate(…)` inside a handler), not copied at start: the value
 * behind a name is the provider's, and tests may put a fake in its place.
 */
export interface Module<
  R extends Record<string, Requirement> = Record<string, Requirement>,
  C extends Sections = Sections,
> {
  name: string;
  /** Top-level config keys this module owns: `{ approvals: approvalsConfigSchema }`. */
  config?: C;
  /** Checks across keys (a route naming a channel), run on the parsed config; one problem per line. */
  checkConfig?(config: Readonly<Record<string, unknown>>): ConfigProblem[];
  provides?: readonly Port<unknown>[];
  requires?: R;
  /** The folder holding this module's `sqlite/` and `postgres/` migrations. */
  migrations?: MigrationFolder;
  routes?(app: App, deps: Deps<R, C>): void;
  start?(deps: Deps<R, C>): Promise<void> | void;
  /**
   * Outbox topics besides the bus that every event appended from the kernel's start on is queued on,
   * in the append's own transaction (`EventLog.alsoQueue`), for a relay the module runs itself: taken
   * before any module starts, so no start-up event is missed.
   */
  outboxTopics?(deps: Deps<R, C>): string[];
  /** Relay subscribers, taken after `start` (they may close over what it built). */
  subscribers?(deps: Deps<R, C>): Subscriber[];
  /** Background loops, taken after `start`: the kernel runs each as a worker and stops it before `stop`. */
  workers?(deps: Deps<R, C>): WorkerSpec[];
  /**
   * Called once every module has started, in start order: work that may need what a later module
   * registers in its `start` (the delivery engine's first claim needs the A2A push sender) begins here.
   */
  started?(deps: Deps<R, C>): void;
  stop?(): Promise<void> | void;
  /** Undefined when ready; otherwise the reason, shown by /readyz and `doctor`. */
  notReady?(): string | undefined;
  /**
   * Undefined when whole; otherwise what works less well while the gateway still serves (a peer it
   * feeds is down and its work waits). /readyz stays ready and lists it under `degraded`.
   */
  degraded?(): string | undefined;
}

/** Identity, for inference: `defineModule({ requires: { gate: gatePort }, start(deps) { deps.gate … } })`. */
export function defineModule<R extends Record<string, Requirement>, C extends Sections>(
  m: Module<R, C>,
): Module<R, C> {
  return m;
}
