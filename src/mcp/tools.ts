import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  ASK_APPROVAL_DESCRIPTION,
  type AskApprovalArgs,
  askApprovalSchema,
  REPORT_PROGRESS_DESCRIPTION,
  type ReportProgressArgs,
  reportProgressSchema,
} from '../notify/schema.js';
import type { ProgressResult } from '../notify/port.js';
import type { McpToolDef, McpToolResult } from '../reach/mcp.js';

/**
 * The two tools, one definition for both transports: `/mcp` binds them to the services in-process,
 * `switchboard mcp` binds them to the gateway over HTTP. The schemas are the CONTRACT.md ones.
 */

export interface ApprovalOutcome {
  outcome: 'approved' | 'rejected' | 'timeout';
  approval_id: string;
  capability?: { id: string; expires_at: string; token: string };
  /** What the approver wrote with the decision: on a reject, what to do differently. */
  comment?: string;
}

/** Sends one MCP progress notification (a no-op when the caller gave no progress token). */
export type ProgressSink = (message: string) => Promise<void>;

export interface ToolHandlers {
  reportProgress(args: ReportProgressArgs): Promise<ProgressResult>;
  askApproval(args: AskApprovalArgs, progress: ProgressSink, signal: AbortSignal): Promise<ApprovalOutcome>;
}

/** The reach registry's tools (src/reach), listed beside the two built-in tools when reach runs. */
export interface ExtraTools {
  tools: readonly McpToolDef[];
  call(
    name: string,
    args: Record<string, unknown>,
    progress: ProgressSink,
    signal: AbortSignal,
  ): Promise<McpToolResult>;
}

export const SERVER_INFO = { name: 'switchboard', version: '0.1.0' };

/**
 * What a model reads about this server before its first call (`initialize` → `instructions`): when to
 * use each tool, and that recipients are not its to choose.
 */
export const SERVER_INSTRUCTIONS = [
  "Switchboard connects you to this task's owner, who may be away from the desk.",
  'Call report_progress when something matters to them: started on a long job, blocked, failed, done (with a link to the result).',
  'Routine progress is merged into digests and the rate is limited, so report news, not every step.',
  'Call ask_approval before an action a person must allow (a deploy, a deletion, spending money): describe it in action, say why in reason, put the exact plan in payload_json as a JSON object, and wait for the outcome.',
  'On rejected, read the comment: it says what the approver wants instead. On timeout, do not go ahead; ask again later or stop.',
  "Neither tool takes a recipient: who is told, and where, comes from the gateway's configuration.",
].join('\n');

/** Tool annotations (MCP hints for clients; not a security boundary). Both tools reach a person. */
const REPORT_PROGRESS_ANNOTATIONS = {
  title: 'Report progress to the owner',
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
} as const;
const ASK_APPROVAL_ANNOTATIONS = {
  title: 'Ask a person for approval',
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
} as const;

/**
 * A registry tool's schema for the SDK: a zod object that lets every argument through (reach checks
 * them with the tool's compiled JSON Schema and answers INVALID_PARAMS a model can act on), carrying
 * the JSON Schema as metadata so `tools/list` shows it as written. One per definition, built once.
 */
const passThrough = new WeakMap<McpToolDef, z.ZodType>();
function sdkSchema(def: McpToolDef): z.ZodType {
  let s = passThrough.get(def);
  if (!s) {
    s = z.looseObject({}).meta({ ...def.inputSchema });
    passThrough.set(def, s);
  }
  return s;
}

/** At most this many progress notifications per call: a stream of partials is news, not a transcript. */
const MAX_PROGRESS_PER_CALL = 100;

function ok(value: object): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}

/** A tool failure the model can read (MCP's convention), with no internals in it. */
function failure(err: unknown): CallToolResult {
  const message = err instanceof Error ? err.message : 'the gateway could not handle the call';
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function progressSink(extra: {
  _meta?: { progressToken?: string | number };
  sendNotification: (n: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; message: string };
  }) => Promise<void>;
}): ProgressSink {
  const token = extra._meta?.progressToken;
  let step = 0;
  return async (message) => {
    if (token === undefined || step >= MAX_PROGRESS_PER_CALL) return;
    step += 1; // the spec requires `progress` to increase with every notification
    await extra.sendNotification({
      method: 'notifications/progress',
      params: { progressToken: token, progress: step, message },
    });
  };
}

export function buildMcpServer(
  h: ToolHandlers,
  opts: { echo?: boolean; extra?: ExtraTools } = {},
): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: SERVER_INSTRUCTIONS,
  });
  server.registerTool(
    'report_progress',
    {
      description: REPORT_PROGRESS_DESCRIPTION,
      inputSchema: reportProgressSchema,
      annotations: REPORT_PROGRESS_ANNOTATIONS,
    },
    async (args) => {
      try {
        return ok(await h.reportProgress(args));
      } catch (err) {
        return failure(err);
      }
    },
  );
  server.registerTool(
    'ask_approval',
    {
      description: ASK_APPROVAL_DESCRIPTION,
      inputSchema: askApprovalSchema,
      annotations: ASK_APPROVAL_ANNOTATIONS,
    },
    async (args, extra) => {
      const token = extra._meta?.progressToken;
      let step = 0;
      const progress: ProgressSink = async (message) => {
        if (token === undefined) return;
        step += 1; // the spec requires `progress` to increase with every notification
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: step, message },
        });
      };
      try {
        return ok(await h.askApproval(args, progress, extra.signal));
      } catch (err) {
        return failure(err);
      }
    },
  );
  for (const def of opts.extra?.tools ?? []) {
    const extra = opts.extra!;
    server.registerTool(
      def.name,
      { description: def.description, inputSchema: sdkSchema(def), annotations: def.annotations },
      async (args, x) => {
        try {
          return await extra.call(def.name, args as Record<string, unknown>, progressSink(x), x.signal);
        } catch (err) {
          return failure(err);
        }
      },
    );
  }
  if (opts.echo) {
    // The bench's baseline: the cheapest tool the SDK can serve, on the same server and transport.
    server.registerTool('echo', { inputSchema: z.strictObject({ text: z.string() }) }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
  }
  return server;
}
