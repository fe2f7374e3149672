import { z } from 'zod';
import { type BreakerConfig, DEFAULT_BREAKER } from './breaker.js';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS } from '../egress/index.js';
import { DEFAULT_RATE, type RateConfig } from './ratelimit.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';

/**
 * The `delivery:` section of switchboard.yaml. Every key is optional; the defaults are the named
 * constants beside the code that uses them (and the tables in docs/delivery.md). Durations are
 * milliseconds with an `_ms` suffix, as elsewhere in the config.
 */
const ms = z.number().int().min(0);

export const deliveryConfigSchema = z.strictObject({
  retry_schedule_ms: z
    .array(ms)
    .min(1)
    .default([...DEFAULT_RETRY_POLICY.scheduleMs]),
  jitter: z.number().min(0).max(0.5).default(DEFAULT_RETRY_POLICY.jitter),
  retry_after_min_ms: ms.default(DEFAULT_RETRY_POLICY.retryAfterMinMs),
  retry_after_max_ms: ms.default(DEFAULT_RETRY_POLICY.retryAfterMaxMs),
  timeout_ms: z.number().int().min(1).default(DEFAULT_TIMEOUT_MS),
  max_response_bytes: z.number().int().min(0).default(DEFAULT_MAX_RESPONSE_BYTES),
  breaker: z
    .strictObject({
      window_ms: z.number().int().min(1).default(DEFAULT_BREAKER.windowMs),
      min_attempts: z.number().int().min(1).default(DEFAULT_BREAKER.minAttempts),
      failure_ratio: z.number().gt(0).max(1).default(DEFAULT_BREAKER.failureRatio),
      cool_down_ms: z.number().int().min(1).default(DEFAULT_BREAKER.coolDownMs),
      max_cool_down_ms: z.number().int().min(1).default(DEFAULT_BREAKER.maxCoolDownMs),
      probe_timeout_ms: z.number().int().min(1).default(DEFAULT_BREAKER.probeTimeoutMs),
      disable_after_opens: z.number().int().min(1).default(DEFAULT_BREAKER.disableAfterOpens),
    })
    .default({
      window_ms: DEFAULT_BREAKER.windowMs,
      min_attempts: DEFAULT_BREAKER.minAttempts,
      failure_ratio: DEFAULT_BREAKER.failureRatio,
      cool_down_ms: DEFAULT_BREAKER.coolDownMs,
      max_cool_down_ms: DEFAULT_BREAKER.maxCoolDownMs,
      probe_timeout_ms: DEFAULT_BREAKER.probeTimeoutMs,
      disable_after_opens: DEFAULT_BREAKER.disableAfterOpens,
    }),
  rate: z
    .strictObject({
      per_second: z.number().gt(0).default(DEFAULT_RATE.ratePerSec),
      burst: z.number().int().min(1).default(DEFAULT_RATE.burst),
      min_per_second: z.number().gt(0).default(DEFAULT_RATE.minRatePerSec),
      recovery_ms: z.number().int().min(1).default(DEFAULT_RATE.recoveryMs),
    })
    .default({
      per_second: DEFAULT_RATE.ratePerSec,
      burst: DEFAULT_RATE.burst,
      min_per_second: DEFAULT_RATE.minRatePerSec,
      recovery_ms: DEFAULT_RATE.recoveryMs,
    }),
});

export type DeliveryConfig = z.infer<typeof deliveryConfigSchema>;

export interface DeliveryPolicies {
  retry: RetryPolicy;
  breaker: BreakerConfig;
  rate: RateConfig;
  timeoutMs: number;
  maxResponseBytes: number;
}

/** The validated section as the policy objects the pure functions take. */
export function deliveryPolicies(c: DeliveryConfig): DeliveryPolicies {
  return {
    retry: {
      scheduleMs: c.retry_schedule_ms,
      jitter: c.jitter,
      retryAfterMinMs: c.retry_after_min_ms,
      retryAfterMaxMs: c.retry_after_max_ms,
    },
    breaker: {
      windowMs: c.breaker.window_ms,
      minAttempts: c.breaker.min_attempts,
      failureRatio: c.breaker.failure_ratio,
      coolDownMs: c.breaker.cool_down_ms,
      maxCoolDownMs: c.breaker.max_cool_down_ms,
      probeTimeoutMs: c.breaker.probe_timeout_ms,
      disableAfterOpens: c.breaker.disable_after_opens,
    },
    rate: {
      ratePerSec: c.rate.per_second,
      burst: c.rate.burst,
      minRatePerSec: c.rate.min_per_second,
      recoveryMs: c.rate.recovery_ms,
    },
    timeoutMs: c.timeout_ms,
    maxResponseBytes: c.max_response_bytes,
  };
}
