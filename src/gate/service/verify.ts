import { type CapabilityCheck, verifyCapability } from '../capability.js';
import { toolMatcher } from '../compile.js';
import { DEFAULT_CLOCK_SKEW_SECONDS, defaultGateOptions } from '../config.js';
import type { CapabilitySigner } from '../types.js';
import type { PolicyHolder } from './holder.js';
import type { IncidentStore } from './incidents-store.js';

/** The read-only list when no policy ever loaded, as the evaluator uses it. */
const fallbackReadOnly = toolMatcher(defaultGateOptions().read_only_tools);

export interface IssuedCheck {
  token: string;
  plan: { tool: string; action?: string | null; resource?: string | null; input: Record<string, unknown> };
  expect?: { tenant?: string; task?: string | null };
}

/**
 * A capability already issued, checked where it is about to be used (`POST /v1/capabilities/verify`,
 * reach before an approved run): signature, expiry and binding, then revocation, then a freeze. A
 * frozen agent or tenant (a person's `incidents freeze`, or a breaker's trip) may still use a
 * capability for a read-only tool — the serving policy's `gate.read_only_tools` — and no other: the
 * freeze reaches the capabilities minted before it (issue 20 point 3; breaker/capability.test.ts).
 */
export function checkIssued(
  d: {
    holder: PolicyHolder;
    incidents: IncidentStore;
    signer: CapabilitySigner | undefined;
    now: () => number;
  },
  c: IssuedCheck,
): Promise<CapabilityCheck> {
  const compiled = d.holder.current();
  return verifyCapability(c.token, {
    keys: d.signer?.keys ?? [],
    plan: c.plan,
    now: new Date(d.now()),
    clock_skew_seconds: compiled?.options.clock_skew_seconds ?? DEFAULT_CLOCK_SKEW_SECONDS,
    expect: c.expect ?? {},
    isRevoked: (claims) => d.incidents.isRevoked(claims),
    frozen: async (claims) => {
      const readOnly = compiled ? compiled.isReadOnly(claims.tool) : fallbackReadOnly(claims.tool);
      return readOnly ? undefined : d.incidents.freezeReason(claims.tenant, claims.agent);
    },
  });
}
