import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { AskApprovalArgs } from '../notify/schema.js';
import type { ApprovalOutcome } from './tools.js';

/**
 * Claude Code's permission relay (issue 21, point 14; ../shared/reference/wave2.md §4): an MCP
 * server that declares `experimental['claude/channel/permission']` receives
 * `notifications/claude/channel/permission_request` `{ request_id, tool_name, description,
 * input_preview }` when Claude Code is about to show a permission dialog, and may answer with
 * `notifications/claude/channel/permission` `{ request_id, behavior: 'allow' | 'deny' }`. The dialog
 * stays up at the desk meanwhile; Claude Code takes the first answer, terminal or channel. Here each
 * request becomes a Switchboard approval (the phone's buttons), and its decision is the answer.
 * Needs Claude Code v2.1.234 or newer. Pinned by channel.test.ts.
 */

export const PERMISSION_CAPABILITY = 'claude/channel/permission';
/** A channel server's own capability; the permission relay is an addition to it. */
export const CHANNEL_CAPABILITY = 'claude/channel';
export const PERMISSION_REQUEST = 'notifications/claude/channel/permission_request';
export const PERMISSION_VERDICT = 'notifications/claude/channel/permission';

const permissionRequestSchema = z.object({
  method: z.literal(PERMISSION_REQUEST),
  params: z.looseObject({
    // Five letters a–z without l, as Claude Code makes them; anything else is not from it.
    request_id: z.string().regex(/^[a-km-z]{5}$/),
    tool_name: z.string().min(1).max(200),
    description: z.string().max(4000).default(''),
    input_preview: z.string().max(20_000).default(''),
  }),
});

export type PermissionRequest = z.infer<typeof permissionRequestSchema>['params'];

/** Asks a person and waits for the outcome (the gateway's `ask_approval`). */
export type Ask = (args: AskApprovalArgs, signal: AbortSignal) => Promise<ApprovalOutcome>;

/** What a permission request asks the phone: the tool and its input, and Claude Code's own words. */
export function approvalFor(req: PermissionRequest): AskApprovalArgs {
  const preview = req.input_preview.replace(/\s+/g, ' ').trim();
  const action = `${req.tool_name}${preview ? `: ${preview}` : ''}`;
  return {
    action: action.length > 500 ? `${action.slice(0, 499)}…` : action,
    reason: req.description || `Claude Code asks for permission to use ${req.tool_name}`,
    payload_json: JSON.stringify({
      tool_name: req.tool_name,
      input_preview: req.input_preview,
      request_id: req.request_id,
      via: PERMISSION_CAPABILITY,
    }),
  };
}

/**
 * Declares the capability and answers each request once: allow on approve, deny on reject, nothing on
 * a timeout (the desk dialog stays, and whoever answers there wins). A request id seen again while its
 * approval is open is not asked twice.
 */
export function relayPermissions(server: McpServer, ask: Ask, log: (line: string) => void): void {
  server.server.registerCapabilities({
    experimental: { [CHANNEL_CAPABILITY]: {}, [PERMISSION_CAPABILITY]: {} },
  });
  const open = new Map<string, AbortController>();
  server.server.onclose = () => {
    for (const c of open.values()) c.abort();
  };
  server.server.setNotificationHandler(permissionRequestSchema, async (n) => {
    const req = n.params as PermissionRequest;
    if (open.has(req.request_id)) return;
    const controller = new AbortController();
    open.set(req.request_id, controller);
    try {
      const outcome = await ask(approvalFor(req), controller.signal);
      if (outcome.outcome === 'timeout' || controller.signal.aborted) return;
      await server.server.notification({
        method: PERMISSION_VERDICT,
        params: { request_id: req.request_id, behavior: outcome.outcome === 'approved' ? 'allow' : 'deny' },
      });
    } catch (err) {
      // The dialog is still up at the desk: failing to relay leaves the person the terminal.
      log(`switchboard mcp: permission request ${req.request_id} not relayed: ${(err as Error).message}`);
    } finally {
      open.delete(req.request_id);
    }
  });
}
