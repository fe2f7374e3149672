import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Context,
  type ContextManager,
  context,
  propagation,
  ROOT_CONTEXT,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { setTracing } from '../trace/span.js';

/**
 * Loaded only when `telemetry.otlp_endpoint` is set (the module imports it lazily): the SDK, an
 * OTLP/HTTP (JSON) exporter behind a batch processor, W3C trace-context propagation, and a context
 * manager on `AsyncLocalStorage` so a span stays current across awaits.
 */

/**
 * The context manager `@opentelemetry/context-async-hooks` provides, in the few lines it takes: the
 * SDK packages installed here do not include it (sdk-trace ships only a synchronous stack one).
 */
class AsyncLocalContextManager implements ContextManager {
  private readonly store = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.store.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.store.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.store.disable();
    return this;
  }
}

export interface Tracing {
  /** Sends what is buffered, then unregisters (a stopped gateway traces nothing). */
  stop(): Promise<void>;
}

export function startTracing(opts: { endpoint: string; serviceName: string; version: string }): Tracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.version }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: opts.endpoint }) })],
  });
  const manager = new AsyncLocalContextManager();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracing(true);
  return {
    async stop() {
      setTracing(false);
      await provider.forceFlush().catch(() => {});
      await provider.shutdown().catch(() => {});
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
