import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assembleConfigSchema } from './config.js';
import { Kernel, ModuleGraphError, orderModules } from './kernel.js';
import { defineModule, type Module, type Services } from './module.js';
import { optional, port } from './port.js';

const a = port<{ hello(): string }>('test.a');
const b = port<{ twice(): string }>('test.b');

const provider = defineModule({
  name: 'provider',
  provides: [a],
  start(d) {
    d.provide(a, { hello: () => 'hi' });
  },
});
const consumer = defineModule({
  name: 'consumer',
  requires: { a },
  provides: [b],
  start(d) {
    d.provide(b, { twice: () => d.a.hello() + d.a.hello() });
  },
});

/** Just enough of the core for the kernel itself: it only hands `relay.subscribe` to modules. */
const core = { relay: { subscribe() {} } } as unknown as Services;

describe('the kernel', () => {
  it('starts a provider before the modules that require it, whatever order they are listed in', () => {
    expect(orderModules([consumer, provider]).map((m) => m.name)).toEqual(['provider', 'consumer']);
  });

  it('keeps the listed order for modules that do not depend on each other', () => {
    const x: Module = { name: 'x' };
    const y: Module = { name: 'y' };
    expect(orderModules([y, x, provider]).map((m) => m.name)).toEqual(['y', 'x', 'provider']);
  });

  it('refuses to start when a required port has no provider, naming the module and the port', () => {
    expect(() => orderModules([consumer])).toThrow(ModuleGraphError);
    expect(() => orderModules([consumer])).toThrow(/module consumer requires port test\.a/);
  });

  it('starts a module whose optional requirement is missing, and hands it undefined', async () => {
    let seen: unknown = 'unset';
    const lenient = defineModule({
      name: 'lenient',
      requires: { a: optional(a) },
      start(d) {
        seen = d.a;
      },
    });
    await new Kernel(core, [lenient]).start();
    expect(seen).toBeUndefined();
  });

  it('refuses a cycle, naming both modules', () => {
    const p = port<unknown>('test.p');
    const q = port<unknown>('test.q');
    const m1 = defineModule({ name: 'one', provides: [p], requires: { q } });
    const m2 = defineModule({ name: 'two', provides: [q], requires: { p } });
    expect(() => orderModules([m1, m2])).toThrow(/modules (one and two|two and one) require each other/);
  });

  it('refuses one port provided by two modules', () => {
    const twin = defineModule({ name: 'twin', provides: [a] });
    expect(() => orderModules([provider, twin])).toThrow(
      /port test\.a is provided by both provider and twin/,
    );
  });

  it('hands a module the services of the ports it requires, read when used', async () => {
    const k = new Kernel(core, [consumer, provider]);
    await k.start();
    expect(k.get(b)?.twice()).toBe('hihi');
    // A test may put a fake behind a port; the consumer sees it at its next use.
    k.ports.set(a, { hello: () => 'yo' });
    expect(k.get(b)?.twice()).toBe('yoyo');
  });

  it('fails start-up when a module declares a port it never provides', async () => {
    const liar = defineModule({ name: 'liar', provides: [a] });
    await expect(new Kernel(core, [liar]).start()).rejects.toThrow(/liar declares port test\.a but did not/);
  });

  it('stops modules in the reverse order they started', async () => {
    const stopped: string[] = [];
    const mk = (name: string, extra: Partial<Module> = {}): Module => ({
      name,
      ...extra,
      stop: () => {
        stopped.push(name);
      },
    });
    const k = new Kernel(core, [
      mk('late', { requires: { a } }),
      mk('early', { provides: [a], start: (d) => d.provide(a, { hello: () => '' }) }),
    ]);
    await k.start();
    await k.stop();
    expect(stopped).toEqual(['late', 'early']);
  });

  it('calls started() once every module has started, in start order', async () => {
    const seen: string[] = [];
    const mk = (name: string): Module => ({
      name,
      start: async () => {
        await new Promise((r) => setImmediate(r));
        seen.push(`start ${name}`);
      },
      started: () => {
        seen.push(`started ${name}`);
      },
    });
    const k = new Kernel(core, [mk('first'), mk('second')]);
    await k.start();
    expect(seen).toEqual(['start first', 'start second', 'started first', 'started second']);
    await k.stop();
  });
});

describe('the assembled config schema', () => {
  const owner = defineModule({
    name: 'owner',
    config: { widgets: z.strictObject({ size: z.number().default(3) }).prefault({}) },
  });

  it('validates a module section strictly and fills its defaults', () => {
    const schema = assembleConfigSchema([owner]);
    expect((schema.parse({}) as Record<string, unknown>).widgets).toEqual({ size: 3 });
    expect(schema.safeParse({ widgets: { colour: 'red' } }).success).toBe(false);
  });

  it('treats a key no module owns as unknown', () => {
    expect(assembleConfigSchema([]).safeParse({ widgets: {} }).success).toBe(false);
  });

  it('refuses two modules claiming one key', () => {
    const rival = defineModule({ name: 'rival', config: { widgets: z.object({}) } });
    expect(() => assembleConfigSchema([owner, rival])).toThrow(
      /config key widgets is claimed by both owner and rival/,
    );
  });

  it('refuses a module claiming a core key', () => {
    const greedy = defineModule({ name: 'greedy', config: { server: z.object({}) } });
    expect(() => assembleConfigSchema([greedy])).toThrow(
      /config key server is claimed by both core and greedy/,
    );
  });
});
