/**
 * A port is a typed name for a service one module provides and others require (Backstage's service
 * refs): the provider's folder declares it in its `port.ts`, a consumer imports that port, so the
 * import graph shows who uses whom, and the kernel hands each module only the ports its manifest names.
 */
export interface Port<T> {
  readonly id: string;
  /** Carries `T` for inference only; never set. A method, so a `Port<Gate>` is also a `Port<unknown>`. */
  __type?(value: T): T;
}

/** A requirement the module can run without (it degrades, and says how, where it reads the port). */
export interface OptionalPort<T> {
  readonly port: Port<T>;
  readonly optional: true;
}

export type Requirement = Port<unknown> | OptionalPort<unknown>;

export function port<T>(id: string): Port<T> {
  return Object.freeze({ id }) as Port<T>;
}

export function optional<T>(p: Port<T>): OptionalPort<T> {
  return Object.freeze({ port: p, optional: true as const });
}

export function portOf(r: Requirement): Port<unknown> {
  return 'optional' in r ? (r.port as Port<unknown>) : (r as Port<unknown>);
}

export function isOptional(r: Requirement): boolean {
  return 'optional' in r;
}

/** What a module's `requires` resolves to: each name, the provider's service (or undefined if optional). */
export type Resolved<R> = { readonly [K in keyof R]: ResolveOne<R[K]> };

type ResolveOne<Q> = Q extends OptionalPort<infer T> ? T | undefined : Q extends Port<infer T> ? T : never;
