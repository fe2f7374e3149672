import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtime.js';
import {
  type Json,
  asRecord,
  jsonReply,
  malformed,
  normalizeFacts,
  parseRaw,
  specOf,
  str,
  verdictFor,
} from '../shared.js';
import { CURSOR_CAPABILITIES, CURSOR_EVENTS } from './events.js';

const KIND = 'cursor';
const VERSION = '1';
const INTENT_EVENTS = new Set(['preToolUse', 'beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile']);
const identity = { kind: KIND, adapterVersion: VERSION, capabilities: CURSOR_CAPABILITIES } as const;

/** Shell and file events carry no tool name: these names let one rule cover them (`tool == "Shell"`). */
export const CURSOR_SHELL_TOOL = 'Shell';
export const CURSOR_READ_TOOL = 'Read';
export const CURSOR_EDIT_TOOL = 'Edit';

/** Some typings give MCP `tool_input` as a JSON string; an unparseable one is kept whole under `raw`. */
function inputOf(value: unknown): Json | undefined {
  if (typeof value !== 'string') return asRecord(value);
  try {
    return asRecord(JSON.parse(value)) ?? { raw: value };
  } catch {
    return { raw: value };
  }
}

function toolFacts(event: string, p: Json): { tool?: string; input?: Json } {
  switch (event) {
    case 'beforeShellExecution':
    case 'afterShellExecution':
      return {
        tool: CURSOR_SHELL_TOOL,
        input: { command: p.command, ...(p.cwd !== undefined ? { cwd: p.cwd } : {}) },
      };
    case 'beforeReadFile':
      return { tool: CURSOR_READ_TOOL, input: { file_path: p.file_path } };
    case 'afterFileEdit':
      return { tool: CURSOR_EDIT_TOOL, input: { file_path: p.file_path } };
    default:
      return { tool: str(p.tool_name), input: inputOf(p.tool_input) };
  }
}

function normalize(raw: unknown): Normalized {
  const parsed = parseRaw(raw);
  if (!parsed.ok) return malformed(identity, parsed.problem);
  const p = parsed.value;
  const event = str(p.hook_event_name) ?? '';
  const roots = Array.isArray(p.workspace_roots) ? p.workspace_roots : [];
  return normalizeFacts(
    identity,
    {
      event,
      sessionId: str(p.conversation_id),
      turnId: str(p.generation_id),
      toolCallId: str(p.tool_use_id),
      ...toolFacts(event, p),
      cwd: str(p.cwd) ?? str(roots[0]),
    },
    p,
    INTENT_EVENTS,
  );
}

function neutralReply(): NativeReply {
  return jsonReply({});
}

function errorReply(message: string): NativeReply {
  // Exit 2 as a block is what Hermes calls "Cursor compatible"; Cursor's own exit semantics are unconfirmed.
  return { exitCode: 2, stdout: '', stderr: `switchboard: ${message}` };
}

function answer(n: Normalized, d: Decision | null): NativeReply {
  if (n.problem) return errorReply(n.problem);
  const row = specOf(CURSOR_EVENTS, n.event);
  if (!d || !row) return neutralReply();
  const original = n.intent?.input;
  switch (row.style) {
    case 'permission': {
      const v = verdictFor(d, original, { ask: true, defer: false, rewrite: 'none' });
      if (v.kind === 'allow') return jsonReply({ permission: 'allow' });
      return jsonReply({
        permission: v.kind === 'ask' ? 'ask' : 'deny',
        userMessage: v.reason,
        agentMessage: v.reason,
      });
    }
    case 'pre_tool': {
      const v = verdictFor(d, original, { ask: false, defer: false, rewrite: 'replace' });
      if (v.kind === 'allow') return jsonReply({ decision: 'allow' });
      if (v.kind === 'rewrite') return jsonReply({ decision: 'allow', updated_input: v.input });
      return jsonReply({ decision: 'deny', reason: v.reason });
    }
    case 'read_file': {
      const v = verdictFor(d, original, { ask: false, defer: false, rewrite: 'none' });
      return jsonReply(
        v.kind === 'allow' ? { permission: 'allow' } : { permission: 'deny', user_message: v.reason },
      );
    }
    case 'prompt': {
      const v = verdictFor(d, original, { ask: false, defer: false, rewrite: 'none' });
      return jsonReply(v.kind === 'allow' ? { continue: true } : { continue: false, user_message: v.reason });
    }
    default:
      return neutralReply();
  }
}

export const cursor: RuntimeAdapter = {
  kind: KIND,
  adapterVersion: VERSION,
  normalize,
  reply: answer,
  neutralReply,
  errorReply,
  capabilities: CURSOR_CAPABILITIES,
  // reference §6: the default is unconfirmed
  defaultTimeoutMs: null,
};
