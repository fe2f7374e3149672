/**
 * The SDK-free part of MCP 2026-07-28 (modern.ts): what the `/mcp` route and the stdio client need to
 * tell a stateless request from a 2025-11-25 one before the SDK is loaded (http.ts loads it lazily, on
 * the first request, so a gateway nobody calls over MCP does not carry it).
 */
export const MODERN_VERSION = '2026-07-28';
export const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const MODERN_KEYS = [VERSION_KEY, CAPABILITIES_KEY, 'io.modelcontextprotocol/clientInfo'];

export type Json = Record<string, unknown>;

export interface RpcRequest {
  jsonrpc: '2.0';
  id?: string | number;
  method: string;
  params?: Json;
}

export function asRecord(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

/** A request of the stateless revision: it names its version in `_meta` (a 2025 request never does). */
export function isModernRequest(body: unknown): body is RpcRequest {
  const meta = asRecord(asRecord(asRecord(body)?.params)?._meta);
  return meta !== undefined && VERSION_KEY in meta;
}
