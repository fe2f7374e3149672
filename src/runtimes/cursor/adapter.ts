import { readJsonText } from '../../envelope/json.js';
import { defineRuntime, exitTwo } from '../define.js';
import { asRecord, type Json, str } from '../shared.js';
import { CURSOR_EVENTS, type ReplyStyle } from './events.js';
import { CURSOR_KINDS, classifyCursor } from './kinds.js';

/** Shell and file events carry no tool name: these names let one rule cover them (`tool == "Shell"`). */
export const CURSOR_SHELL_TOOL = 'Shell';
export const CURSOR_READ_TOOL = 'Read';
export const CURSOR_EDIT_TOOL = 'Edit';

/**
 * Some typings give MCP `tool_input` as a JSON string; one that does not parse, or that the door
 * would refuse (nested past 64, a lone surrogate), is kept whole under `raw`.
 */
function inputOf(value: unknown): Json | undefined {
  if (typeof value !== 'string') return asRecord(value);
  const read = readJsonText(value);
  return (read.ok ? asRecord(read.value) : undefined) ?? { raw: value };
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

export const cursor = defineRuntime<ReplyStyle>({
  kind: 'cursor',
  adapterVersion: '1',
  events: CURSOR_EVENTS,
  kinds: CURSOR_KINDS,
  classify: classifyCursor,
  intentEvents: ['preToolUse', 'beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile'],
  fields: {
    event: 'hook_event_name',
    sessionId: 'conversation_id',
    turnId: 'generation_id',
    toolCallId: 'tool_use_id',
    cwd: ['cwd', 'workspace_roots.0'],
  },
  facts: toolFacts,
  replies: {
    permission: {
      allow: () => ({ permission: 'allow' }),
      ask: (v) => ({ permission: 'ask', userMessage: v.reason, agentMessage: v.reason }),
      deny: (v) => ({ permission: 'deny', userMessage: v.reason, agentMessage: v.reason }),
    },
    pre_tool: {
      allow: () => ({ decision: 'allow' }),
      rewrite: (v) => ({ decision: 'allow', updated_input: v.input }),
      deny: (v) => ({ decision: 'deny', reason: v.reason }),
    },
    read_file: {
      allow: () => ({ permission: 'allow' }),
      deny: (v) => ({ permission: 'deny', user_message: v.reason }),
    },
    prompt: {
      allow: () => ({ continue: true }),
      deny: (v) => ({ continue: false, user_message: v.reason }),
    },
  },
  neutral: {},
  // Exit 2 as a block is what Hermes calls "Cursor compatible"; Cursor's own exit semantics are unconfirmed.
  errorReply: exitTwo,
  // reference §6: the default is unconfirmed
  defaultTimeoutMs: null,
});
