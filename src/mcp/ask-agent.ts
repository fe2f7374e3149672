import { ASK_AGENT_DESCRIPTION, askAgentSchema, type Receipt } from '../agents/port.js';
import type { McpToolDef, McpToolResult } from '../reach/mcp.js';

/**
 * `ask_agent { skill, input }` (CONTRACT.md) for both transports, SDK-free: `/mcp` calls the agents
 * module in process (engine.ts), `switchboard mcp` posts `/v1/collaborations` to the gateway
 * (stdio.ts, gateway.ts). One definition, one way to turn a receipt or a refusal into a tool result.
 */

export const ASK_AGENT_DEF: McpToolDef = {
  name: 'ask_agent',
  description: ASK_AGENT_DESCRIPTION,
  inputSchema: {
    type: 'object',
    properties: {
      skill: { type: 'string', minLength: 1, description: 'The skill to ask for' },
      input: { description: 'What the other agent should work on: text, or any JSON value' },
    },
    required: ['skill', 'input'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
};

/** A refusal (no agent, a cycle, the policy, bad arguments) as the model reads it: its code first. */
export interface AskAgentRefusal {
  code: string;
  message: string;
  details?: unknown;
}

/** The arguments checked as the gateway checks them; a refusal the model can act on otherwise. */
export function askAgentArgs(
  args: Record<string, unknown>,
): { ok: true; skill: string; input: unknown } | { ok: false; refusal: AskAgentRefusal } {
  const parsed = askAgentSchema.safeParse(args);
  if (parsed.success) return { ok: true, skill: parsed.data.skill, input: parsed.data.input };
  return {
    ok: false,
    refusal: {
      code: 'INVALID_PARAMS',
      message: parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; '),
    },
  };
}

/** The receipt as a tool result: `isError` unless the collaboration completed. */
export function receiptResult(receipt: Receipt): McpToolResult {
  return {
    ...(receipt.state === 'completed' ? {} : { isError: true }),
    content: [{ type: 'text', text: JSON.stringify(receipt) }],
    structuredContent: receipt as unknown as Record<string, unknown>,
  };
}

export function refusalResult(r: AskAgentRefusal): McpToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${r.code}: ${r.message}` }],
    structuredContent: { error: { code: r.code, message: r.message, details: r.details ?? null } },
  };
}
