import { z } from 'zod';
import type { Principal } from '../kernel/module.js';
import { port } from '../kernel/port.js';
import type { AgentListing } from './registry.js';
import { STRATEGIES } from './route.js';

export type { AgentListing };

/** Seed 002 §6: fifteen seconds, then the next agent is asked (the default). */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** `POST /v1/collaborations`; `ask_agent` takes `skill` and `input` of it. */
export const collaborationSchema = z.strictObject({
  skill: z.string().min(1).max(200),
  input: z.unknown().refine((v) => v !== undefined, { message: 'required (a string or any JSON value)' }),
  timeout_ms: z.number().int().min(100).max(600_000).default(DEFAULT_TIMEOUT_MS),
  from_task_id: z
    .string()
    .regex(/^tsk_[0-9A-HJKMNP-TV-Z]{26}$/, 'a task id (tsk_…)')
    .optional(),
  strategy: z.enum(STRATEGIES).default('weighted'),
  fallback: z.boolean().default(true),
});
export type CollaborationRequest = z.output<typeof collaborationSchema>;

/** CONTRACT.md's MCP tool `ask_agent { skill, input }`. */
export const askAgentSchema = z.strictObject({
  skill: z.string().min(1).max(200).describe('The skill to ask for (GET /v1/agents lists them)'),
  input: z.unknown().describe('What the other agent should work on: text, or any JSON value'),
});
export type AskAgentArgs = z.output<typeof askAgentSchema>;

export const ASK_AGENT_DESCRIPTION =
  'Ask another agent for a result: Switchboard routes the skill to an agent that is up and has it, waits for the answer (falling back to the next agent once on a timeout) and returns the receipt with the result.';

export type AttemptState = 'working' | 'completed' | 'failed' | 'timed_out';
export type CollaborationState = AttemptState;

export interface Attempt {
  agent: string;
  state: AttemptState;
  /** The remote A2A task, once the agent made one. */
  task_id: string | null;
  score: number;
  started_at: string;
  finished_at: string | null;
  latency_ms: number | null;
  error?: string;
}

/** `GET /v1/collaborations/{ref_id}`: the receipt. */
export interface Receipt {
  ref_id: string;
  skill: string;
  agent: string | null;
  state: CollaborationState;
  result?: { text: string };
  error?: { code: string; message: string };
  started_at: string;
  finished_at: string | null;
  attempts: Attempt[];
  from_task_id: string | null;
}

export interface AgentsService {
  /** GET /v1/agents: every agent, liveness judged now. */
  list(): AgentListing[];
  /** Routes and runs a collaboration; resolves with the receipt once it ended. Refusals throw AppError. */
  collaborate(req: CollaborationRequest, caller: Principal): Promise<Receipt>;
  /** The receipt, for the key that asked (or an admin). Reads only. */
  receipt(refId: string, caller: Principal): Promise<Receipt | undefined>;
}

/** The agents registry and collaborations (src/agents/module.ts provides it; the MCP server's `ask_agent`). */
export const agentsPort = port<AgentsService>('agents');
