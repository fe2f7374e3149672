import { z } from 'zod';
import { defineModule } from '../kernel/module.js';
import type { Tracing } from './sdk.js';

/** What the traces call this service (OTel's `service.name`). */
export const SERVICE_NAME = 'switchboard';
const VERSION = '0.1.0';

/**
 * `telemetry:` — traces over OTLP/HTTP. Without `otlp_endpoint` (the default) nothing of the SDK is
 * loaded and the span helpers cost one boolean test. docs/scale.md#opentelemetry.
 */
export const telemetryConfigSchema = z
  .strictObject({
    /** The collector's traces URL, `http://127.0.0.1:4318/v1/traces` (OTLP/HTTP, JSON). */
    otlp_endpoint: z
      .url({
        protocol: /^https?$/,
        error: 'an http(s) URL of the collector, e.g. http://127.0.0.1:4318/v1/traces',
      })
      .optional(),
  })
  .prefault({});

const sections = { telemetry: telemetryConfigSchema };

export function telemetryModule() {
  let tracing: Tracing | undefined;
  return defineModule({
    name: 'telemetry',
    config: sections,
    async start(deps) {
      const endpoint = deps.config.telemetry.otlp_endpoint;
      if (!endpoint) return;
      const { startTracing } = await import('./sdk.js');
      tracing = startTracing({ endpoint, serviceName: SERVICE_NAME, version: VERSION });
      deps.logger.info({ endpoint }, 'tracing: spans go to the OTLP endpoint');
    },
    async stop() {
      await tracing?.stop();
      tracing = undefined;
    },
  });
}
