import { z } from 'zod';
import { outboundUrl } from '../egress/index.js';

/**
 * The `agents:` section (CONTRACT.md: `agents: { <id>: { card_url, token_env, weight } }`) and
 * `agents_heartbeat_ttl_seconds`. An id is what the agent's own Switchboard key is named: that key
 * (and only it) may send the agent's heartbeats.
 */

/** Seed 002 §6: thirty seconds without a heartbeat or a successful call and an agent gets no work. */
export const DEFAULT_HEARTBEAT_TTL_SECONDS = 30;

/** An agent id: what a key name may be, and what a rule's `resource` names (`agent:<id>/<skill>`). */
export const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name like ANALYST_TOKEN');

export const agentEntrySchema = z.strictObject({
  /** Where the agent's A2A v1.0 card is (usually `…/.well-known/agent-card.json`); fetched through egress. */
  card_url: outboundUrl,
  /** The variable holding the bearer token Switchboard sends the agent (never the token itself). */
  token_env: envName.optional(),
  /** Weighted routing's multiplier: an agent with weight 2 gets about twice the share of one with 1. */
  weight: z.number().positive().max(1000).default(1),
});

export type AgentEntry = z.output<typeof agentEntrySchema>;

export const agentsSchema = z
  .record(
    z.string().regex(AGENT_ID, 'an agent id is 1–64 of A-Z a-z 0-9 _ . - (a key name)'),
    agentEntrySchema,
  )
  .default({});

export const heartbeatTtlSchema = z.number().int().min(1).max(86_400).default(DEFAULT_HEARTBEAT_TTL_SECONDS);

export const agentsSections = {
  agents: agentsSchema,
  agents_heartbeat_ttl_seconds: heartbeatTtlSchema,
};
