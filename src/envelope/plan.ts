import { jsonDigest } from './digest.js';

/** The plan a capability binds, an approval freezes and a resource service checks: exactly what will run. */
export interface Plan {
  tool: string;
  action: string | null;
  resource: string | null;
  input: Record<string, unknown>;
}

/**
 * `sha256:` over the canonical JSON (RFC 8785) of tool, action, resource and input: the same plan
 * always has the same digest, and any change to what would run changes it. Absent action and
 * resource count as null, so `{}` and `{ action: null }` name the same plan.
 */
export function planDigest(plan: {
  tool: string;
  action?: string | null;
  resource?: string | null;
  input: Record<string, unknown>;
}): string {
  const canonical: Plan = {
    tool: plan.tool,
    action: plan.action ?? null,
    resource: plan.resource ?? null,
    input: plan.input,
  };
  return jsonDigest(canonical);
}
