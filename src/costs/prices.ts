import type { Price } from './config.js';
import type { ModelUsage } from './usage.js';

/**
 * The price of `model`: its own entry, else the longest key it starts with (`claude-sonnet-4-5`
 * prices `claude-sonnet-4-5-20250929`); undefined when none fits (its tokens are counted as unpriced).
 */
export function priceOf(prices: Readonly<Record<string, Price>>, model: string): Price | undefined {
  const exact = prices[model];
  if (exact) return exact;
  let best: string | undefined;
  for (const key of Object.keys(prices)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : prices[best];
}

export const tokensOf = (u: ModelUsage): number => u.input + u.output + u.cache_read + u.cache_write;

/**
 * What the usage cost, in millionths of the currency: tokens × (price per million tokens) is exactly
 * that unit, so a sum of rows stays an exact integer. Undefined when the model has no price.
 */
export function costMicros(prices: Readonly<Record<string, Price>>, u: ModelUsage): number | undefined {
  const p = priceOf(prices, u.model);
  if (!p) return undefined;
  return Math.round(
    u.input * p.input_per_mtok +
      u.output * p.output_per_mtok +
      u.cache_read * (p.cache_read_per_mtok ?? p.input_per_mtok) +
      u.cache_write * (p.cache_write_per_mtok ?? p.input_per_mtok),
  );
}
