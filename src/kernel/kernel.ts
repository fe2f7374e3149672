import { AppError } from '../errors/index.js';
import type { App, Deps, Module, Sections, Services } from './module.js';
import { isOptional, type Port, port, portOf, type Requirement } from './port.js';
import { startWorker, type Worker } from './worker.js';

type AnyDeps = Deps<Record<string, Requirement>, Sections>;

/** A manifest problem found before anything starts: a missing provider, a cycle, a port provided twice. */
export class ModuleGraphError extends Error {
  override name = 'ModuleGraphError';
}

/** What the kernel itself offers modules: the readiness of every module (for /readyz). */
export interface KernelInfo {
  notReady(): string[];
  /** What works less well while the gateway stays ready (`nats: …`), one line per module. */
  degraded(): string[];
  moduleNames(): string[];
}

export const kernelPort = port<KernelInfo>('kernel');

/**
 * Orders modules so every provider starts before the modules that require it (optional requirements
 * too, when their provider is present). Stable: modules that do not depend on each other keep the
 * order they were listed in. Throws one line naming both modules for a missing provider or a cycle.
 */
export function orderModules(
  modules: readonly Module[],
  external: ReadonlySet<string> = new Set(),
): Module[] {
  const providers = new Map<string, Module>();
  for (const m of modules) {
    for (const p of m.provides ?? []) {
      const other = providers.get(p.id);
      if (other) throw new ModuleGraphError(`port ${p.id} is provided by both ${other.name} and ${m.name}`);
      providers.set(p.id, m);
    }
  }
  const edges = new Map<Module, Module[]>();
  for (const m of modules) {
    const needs: Module[] = [];
    for (const [name, req] of Object.entries(m.requires ?? {})) {
      const id = portOf(req).id;
      if (id === kernelPort.id || external.has(id)) continue;
      const provider = providers.get(id);
      if (!provider) {
        if (isOptional(req)) continue;
        throw new ModuleGraphError(
          `module ${m.name} requires port ${portOf(req).id} (as ${name}), which no module provides; add the module that provides it`,
        );
      }
      if (provider !== m) needs.push(provider);
    }
    edges.set(m, needs);
  }
  const ordered: Module[] = [];
  const state = new Map<Module, 'visiting' | 'done'>();
  const visit = (m: Module, from: Module | undefined) => {
    const s = state.get(m);
    if (s === 'done') return;
    if (s === 'visiting')
      throw new ModuleGraphError(
        `modules ${from?.name} and ${m.name} require each other (a cycle); break it`,
      );
    state.set(m, 'visiting');
    for (const dep of edges.get(m) ?? []) visit(dep, m);
    state.set(m, 'done');
    ordered.push(m);
  };
  for (const m of modules) visit(m, undefined);
  return ordered;
}

/** The services behind the ports, by port id. Tests may replace one (`kernel.ports.set(gatePort, fake)`). */
export class PortRegistry {
  private readonly impls = new Map<string, unknown>();

  get<T>(p: Port<T>): T | undefined {
    return this.impls.get(p.id) as T | undefined;
  }

  set<T>(p: Port<T>, impl: T | undefined): void {
    if (impl === undefined) this.impls.delete(p.id);
    else this.impls.set(p.id, impl);
  }

  has(p: Port<unknown>): boolean {
    return this.impls.has(p.id);
  }
}

/**
 * Runs a set of modules over one set of core services: builds each module's `deps` (the core, its
 * config, getters for the ports it requires), mounts routes, starts in dependency order, subscribes,
 * and stops in reverse.
 */
export class Kernel {
  readonly modules: Module[];
  readonly ports = new PortRegistry();
  private readonly deps = new Map<Module, AnyDeps>();
  private started: Module[] = [];
  /** Undoes of the modules' `outboxTopics`, for stop. */
  private readonly unqueue: (() => void)[] = [];
  private readonly running = new Map<Module, Worker[]>();

  constructor(
    private readonly services: Services,
    modules: readonly Module[],
    opts: {
      /** Ports set from outside before start (a test's fakes): they count as provided. */
      external?: readonly Port<unknown>[];
    } = {},
  ) {
    this.modules = orderModules(modules, new Set((opts.external ?? []).map((p) => p.id)));
    this.ports.set(kernelPort, {
      notReady: () => this.notReady(),
      degraded: () => this.degraded(),
      moduleNames: () => this.modules.map((m) => m.name),
    });
    for (const m of this.modules) this.deps.set(m, this.depsFor(m) as AnyDeps);
  }

  /** The service behind a port, or undefined when no running module provides it. */
  get<T>(p: Port<T>): T | undefined {
    return this.ports.get(p);
  }

  routes(app: App): void {
    for (const m of this.modules) m.routes?.(app, this.deps.get(m)!);
  }

  async start(): Promise<void> {
    for (const m of this.modules)
      for (const topic of m.outboxTopics?.(this.deps.get(m)!) ?? [])
        this.unqueue.push(this.services.log.alsoQueue(topic));
    for (const m of this.modules) {
      const deps = this.deps.get(m)!;
      await m.start?.(deps);
      this.started.push(m);
      for (const p of m.provides ?? []) {
        if (!this.ports.has(p))
          throw new ModuleGraphError(
            `module ${m.name} declares port ${p.id} but did not provide it in start()`,
          );
      }
      for (const sub of m.subscribers?.(deps) ?? []) this.services.relay.subscribe(sub);
      const specs = m.workers?.(deps) ?? [];
      if (specs.length > 0)
        this.running.set(
          m,
          specs.map((spec) => startWorker(spec, this.services.logger)),
        );
    }
    for (const m of this.modules) m.started?.(this.deps.get(m)!);
  }

  /** The running workers of every module, by name (tests wake or inspect them). */
  workers(): Worker[] {
    return [...this.running.values()].flat();
  }

  async stop(): Promise<void> {
    for (const m of [...this.started].reverse()) {
      await Promise.all((this.running.get(m) ?? []).map((w) => w.stop()));
      this.running.delete(m);
      await m.stop?.();
    }
    this.started = [];
    for (const undo of this.unqueue.splice(0)) undo();
  }

  /** Why modules are not ready, one line each (`gate: no policy loaded: …`). */
  notReady(): string[] {
    return this.modules.flatMap((m) => {
      const reason = m.notReady?.();
      return reason ? [`${m.name}: ${reason}`] : [];
    });
  }

  /** What works less well while the gateway stays ready, one line per module (`nats: …`). */
  degraded(): string[] {
    return this.modules.flatMap((m) => {
      const reason = m.degraded?.();
      return reason ? [`${m.name}: ${reason}`] : [];
    });
  }

  /** The deps a module would get here (tests start a module by hand with them). */
  depsFor<R extends Record<string, Requirement>, C extends Sections>(module: Module<R, C>): Deps<R, C> {
    const m = module as unknown as Module;
    const provides = new Set((m.provides ?? []).map((p) => p.id));
    const deps = Object.create(this.services) as AnyDeps;
    Object.defineProperty(deps, 'provide', {
      value: <T>(p: Port<T>, impl: T) => {
        if (!provides.has(p.id))
          throw new ModuleGraphError(
            `module ${m.name} provides port ${p.id} without declaring it in provides`,
          );
        this.ports.set(p, impl);
      },
    });
    for (const [name, req] of Object.entries(m.requires ?? {})) {
      const p = portOf(req);
      const optional = isOptional(req);
      Object.defineProperty(deps, name, {
        enumerable: true,
        get: () => {
          const impl = this.ports.get(p);
          if (impl === undefined && !optional)
            throw new AppError('not_ready', `${m.name} needs ${p.id}, whose module is not running`);
          return impl;
        },
      });
    }
    return deps as unknown as Deps<R, C>;
  }
}
