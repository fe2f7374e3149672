import type { ToolListing, TouchResponse } from './protocol.js';

/**
 * Registry tools as MCP sees them — one definition for `/mcp` (in process) and `switchboard mcp`
 * (which reads GET /v1/tools): the name, the closed input schema, the description, and annotations
 * from the permission (`readOnlyHint` for read tools; `openWorldHint` for http ones, whose answers
 * come from outside). A touch's answer becomes a tool result: the processed data as
 * `structuredContent` (an object, as MCP requires: a list is wrapped as `{ result }`) and its
 * `field: value` text; a refusal is `isError` with the code first, so a model reads what to do.
 */

export interface McpToolDef {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

export interface McpToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export function mcpToolDef(t: ToolListing): McpToolDef {
  const readOnly = t.permission === 'read';
  return {
    name: t.name,
    description: t.description || `${t.kind} tool ${t.name}`,
    inputSchema: t.input_schema,
    annotations: {
      readOnlyHint: readOnly,
      destructiveHint: t.permission === 'admin',
      ...(readOnly ? { idempotentHint: true } : {}),
      openWorldHint: t.kind === 'http',
    },
  };
}

export function mcpResult(r: TouchResponse): McpToolResult {
  if (!r.ok || r.error) {
    const e = r.error ?? { code: 'TOOL_FAILED', message: 'the touch failed' };
    return {
      isError: true,
      content: [{ type: 'text', text: `${e.code}: ${e.message}` }],
      structuredContent: { request_id: r.request_id, error: e },
    };
  }
  if (r.status === 'running' || r.status === 'awaiting_approval')
    return {
      content: [{ type: 'text', text: `${r.status}: request ${r.request_id}` }],
      structuredContent: { request_id: r.request_id, status: r.status },
    };
  const data = r.data;
  const structured =
    data !== null && typeof data === 'object' && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : { result: data ?? null };
  const text = r.text ?? JSON.stringify(data ?? null);
  return { content: [{ type: 'text', text }], structuredContent: structured };
}
