import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { EnvelopeInput, Envelope } from '../envelope/index.js';
import type { EventLog } from '../log/log.js';
import type { Relay } from '../log/relay.js';
import type { Vault } from '../log/vault.js';
import type { Db } from '../store/port.js';
import type { KeyRing } from './auth.js';
import type { Metrics } from './metrics.js';
import type {
  ApprovalService,
  DeliveryPort,
  GateService,
  PhoneApprovals,
  TaskService,
} from '../server/ports.js';

export type Role = 'admin' | 'agent' | 'approver';

/** Who is calling: resolved from the bearer key by the auth middleware. */
export interface Principal {
  name: string;
  role: Role;
  /** A key scoped to one task (issued to a launched agent) carries it; the task comes from here, never the body. */
  task_id?: string;
}

export interface AppEnv {
  Variables: { principal: Principal; requestId: string };
}

export type App = Hono<AppEnv>;

/** Everything a module may use. Built once at start-up; modules never construct their own. */
export interface Services {
  config: Config;
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
  /** Set by the gate module when it starts; undefined while it is not running. */
  gate?: GateService;
  /** Set by the approvals module when it starts. */
  approvals?: ApprovalService;
  /** Set by the delivery module when it starts. */
  deliveries?: DeliveryPort;
  /** Set by the tasks module when it starts. */
  tasks?: TaskService;
  /** Set by the signals module when it starts: permission prompts taken to the phone while away. */
  phone?: PhoneApprovals;
  /** Appends an event (and its outbox row) using the configured tenant and environment. */
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
}

/**
 * A module plugs into the server without the server knowing what it does: it adds routes, starts
 * workers (which must stop on `stop`), and may report why it is not ready.
 */
export interface Module {
  name: string;
  routes?(app: App, services: Services): void;
  start?(services: Services): Promise<void> | void;
  stop?(): Promise<void> | void;
  /** Undefined when ready; otherwise the reason, shown by /readyz and `doctor`. */
  notReady?(): string | undefined;
}
