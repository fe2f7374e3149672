import type { GateDecision } from '../gate/port.js';
import type { EnvelopeInput, EventType } from '../envelope/index.js';
import type { Classified, ToolKind } from '../gate/kinds.js';

/**
 * The gate's answer as the adapters read it: the decision contract (`GateDecision`, declared once in
 * the gate's port) with only the fields every reply needs required.
 */
export type Decision = Pick<GateDecision, 'decision' | 'reason_code'> &
  Partial<Omit<GateDecision, 'decision' | 'reason_code'>>;

export type RuntimeKind = 'claude-code' | 'codex' | 'hermes' | 'openclaw' | 'gemini-cli' | 'cursor';

/** What the gate must decide, present only on events that ask before a side effect. */
export interface Intent {
  tool: string;
  input: Record<string, unknown>;
  action?: string;
  resource?: string;
}

export interface Normalized {
  /** The runtime's own event name (`PreToolUse`, `before_tool_call`, …); `''` when the input named none. */
  event: string;
  /** Usually one; an unknown or malformed input still yields one `agent.runtime.unrecognized` envelope. */
  envelopes: EnvelopeInput[];
  /** The runtime waits for the reply and the reply can change what happens. */
  blocking: boolean;
  intent?: Intent;
  /** The intent's canonical kind and args (docs/policy.md, "Kinds"); present with `intent`. */
  classified?: Classified;
  sessionId?: string;
  /** Set when the input was not a JSON object: `reply` then answers with the runtime's native error. */
  problem?: string;
}

export interface NativeReply {
  exitCode: number;
  /** A JSON document or empty. */
  stdout: string;
  stderr: string;
  /**
   * The body to answer with when the runtime itself calls the HTTP route (Claude Code HTTP hooks, the
   * OpenClaw plugin). Absent for command-only runtimes, whose bridge needs the exit code and stderr too.
   */
  httpBody?: unknown;
}

export type Capability = 'can_block' | 'observe_only' | 'needs_user_input' | 'unknown';

export interface EventCapability {
  capability: Capability;
  envelopeType: EventType;
  notes?: string;
}

/** Keyed by the runtime's native event name. */
export type CapabilityMatrix = Record<string, EventCapability>;

export interface RuntimeAdapter {
  kind: RuntimeKind;
  adapterVersion: string;
  /** Never throws: unknown events become `agent.runtime.unrecognized`, malformed input sets `problem`. */
  normalize(raw: unknown, ctx?: { argv?: string[] }): Normalized;
  /** `decision` null means observe-only: the neutral reply. */
  reply(n: Normalized, decision: Decision | null): NativeReply;
  neutralReply(): NativeReply;
  /** Malformed input: the runtime's native error with the exit code it expects. */
  errorReply(message: string): NativeReply;
  capabilities: CapabilityMatrix;
  /** A tool of this runtime as the policy sees it: its canonical kind and args (src/runtimes/kinds.ts). */
  classify(tool: string, input: Record<string, unknown>): Classified;
  /** The kind of each tool the runtime's table names (MCP tools are known by their name's shape). */
  toolKinds: Readonly<Record<string, ToolKind>>;
  /**
   * How long the runtime waits for a blocking hook by default, or null where that is undocumented.
   * A held `require_approval` must answer before this, or the runtime decides on its own.
   */
  defaultTimeoutMs: number | null;
}
