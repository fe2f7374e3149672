import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { CLI, requireBuild, ROOT } from '../cli/testing.js';
import { KEYS } from '../server/testing.js';
import { type Gateway, startGateway as start } from './testing.js';

const REPORT_PROGRESS_SCHEMA = {
  type: 'object',
  properties: {
    stage: {
      type: 'string',
      enum: ['started', 'progress', 'blocked', 'awaiting_approval', 'done', 'failed'],
      description: expect.any(String),
    },
    summary: { type: 'string', maxLength: 120, description: expect.any(String) },
    detail: { type: 'string', description: expect.any(String) },
    artifact: { type: 'string', description: expect.any(String) },
    severity: {
      type: 'string',
      enum: ['info', 'warn', 'critical'],
      default: 'info',
      description: expect.any(String),
    },
  },
  required: ['stage', 'summary'],
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
};

async function startGateway(store: TestStore): Promise<Gateway> {
  const g = await start(store.db, { agent: KEYS.agent, approver: KEYS.approver });
  return {
    ...g,
    cleanup: async () => {
      await g.cleanup();
      await store.cleanup();
    },
  };
}

const ASK_APPROVAL_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string', minLength: 1, maxLength: 500, description: expect.any(String) },
    reason: { type: 'string', minLength: 1, maxLength: 4000, description: expect.any(String) },
    payload_json: { type: 'string', maxLength: 262144, default: '{}', description: expect.any(String) },
  },
  required: ['action', 'reason'],
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
};

function httpTransport(url: string, key: string = KEYS.agent): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
}

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function until<T>(fn: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Decides the approval announced on the phone, as a person pressing the button would (a second request). */
async function decideAnnounced(
  g: Gateway,
  decision: 'approve' | 'reject',
  comment?: string,
): Promise<string> {
  const announced = await until(() => g.seen.find((s) => s.message.kind === 'approval'));
  const actions = announced.message.actions as { approvalId: string; approveUrl: string };
  expect(actions.approveUrl).toMatch(/^https:\/\/switchboard\.example\/a\//);
  const res = await fetch(`${g.server.url}/v1/approvals/${actions.approvalId}/decision`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEYS.approver}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision, ...(comment ? { comment } : {}) }),
  });
  expect(res.status).toBe(200);
  return actions.approvalId;
}

describe.each(await dialects())('MCP over Streamable HTTP at /mcp on %s', (dialect) => {
  let g: Gateway;
  let client: Client;
  beforeAll(async () => {
    g = await startGateway(await freshStore(dialect));
    client = await connect(httpTransport(g.server.url));
  });
  afterAll(async () => {
    await client?.close();
    await g?.cleanup();
  });

  it('lists exactly the two tools with the CONTRACT.md input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask_approval', 'report_progress']);
    expect(tools.find((t) => t.name === 'report_progress')?.inputSchema).toEqual(REPORT_PROGRESS_SCHEMA);
    expect(tools.find((t) => t.name === 'ask_approval')?.inputSchema).toEqual(ASK_APPROVAL_SCHEMA);
  });

  it('refuses a tool call that names recipients, records it and alerts the owner (seed 000)', async () => {
    const before = g.seen.length;
    const refused = await client
      .callTool({
        name: 'report_progress',
        arguments: { stage: 'done', summary: 'sent it', chat_id: '12345', to: 'boss@example.com' },
      })
      .then(
        (r) => r.isError === true,
        () => true,
      );
    expect(refused).toBe(true);
    const blocked = (
      await g.server.services.log.list({ type: 'agent.notification.blocked', newestFirst: true, limit: 1 })
    ).map((e) => e.envelope);
    expect(blocked[0]?.redacted_summary).toEqual({
      reason: 'recipient_in_tool_call',
      keys: ['chat_id', 'to'],
    });
    expect(blocked[0]?.subject.tool).toBe('report_progress');
    expect(JSON.stringify(blocked)).not.toContain('boss@example.com');
    const alert = await until(() =>
      g.seen.slice(before).find((x) => String(x.message.summary).includes('tried to choose recipients')),
    );
    expect(alert).toMatchObject({ destination: 'phone' });
    expect(JSON.stringify(alert)).not.toContain('boss@example.com');
  });

  it('reports progress through the same path as POST /v1/progress', async () => {
    const before = g.seen.length;
    const result = await client.callTool({
      name: 'report_progress',
      arguments: { stage: 'failed', summary: 'build broke' },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: expect.stringMatching(/^evt_/), status: 'sent' });
    expect(g.seen.slice(before)).toEqual([
      expect.objectContaining({ destination: 'phone', priority: 'high' }),
    ]);
  });

  // A smuggled recipient is refused too, and alerts the owner: the test above.
  it.each([
    ['a summary of 121 characters', { stage: 'done', summary: 'x'.repeat(121) }],
    ['an unknown stage', { stage: 'halfway', summary: 'x' }],
  ])('refuses %s and sends nothing', async (_name, args) => {
    const before = g.seen.length;
    const result = await client.callTool({ name: 'report_progress', arguments: args });
    expect(result.isError).toBe(true);
    expect(g.seen.length).toBe(before);
  });

  it('refuses a client without a valid agent key', async () => {
    await expect(connect(httpTransport(g.server.url, 'wrong-key-0123456789abcdef'))).rejects.toThrow();
    await expect(connect(httpTransport(g.server.url, KEYS.approver))).rejects.toThrow();
  });

  it('asks for approval, sends progress while it waits, and returns approved when a person approves', async () => {
    const progress: string[] = [];
    const call = client.callTool(
      {
        name: 'ask_approval',
        arguments: { action: 'deploy v2', reason: 'release day', payload_json: '{"env":"prod"}' },
      },
      undefined,
      {
        onprogress: (p) => progress.push(String(p.message)),
        resetTimeoutOnProgress: true,
      },
    );
    const id = await decideAnnounced(g, 'approve');
    const result = await call;
    expect(result.structuredContent).toMatchObject({ outcome: 'approved', approval_id: id });
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });

  it('returns rejected when the person rejects', async () => {
    g.seen.length = 0;
    const call = client.callTool({
      name: 'ask_approval',
      arguments: { action: 'drop table', reason: 'cleanup' },
    });
    const id = await decideAnnounced(g, 'reject');
    expect((await call).structuredContent).toEqual({ outcome: 'rejected', approval_id: id });
  });

  it('answers a payload that is not a JSON object as a tool error', async () => {
    const result = await client.callTool({
      name: 'ask_approval',
      arguments: { action: 'x', reason: 'y', payload_json: '[1]' },
    });
    expect(result.isError).toBe(true);
  });

  it('returns the approver comment with a reject', async () => {
    g.seen.length = 0;
    const call = client.callTool({
      name: 'ask_approval',
      arguments: { action: 'force push main', reason: 'history cleanup' },
    });
    const id = await decideAnnounced(g, 'reject', 'open a PR instead');
    expect((await call).structuredContent).toEqual({
      outcome: 'rejected',
      approval_id: id,
      comment: 'open a PR instead',
    });
  });

  it.each([
    ['an action over 500 characters', { action: 'x'.repeat(501), reason: 'y' }],
    ['a reason over 4000 characters', { action: 'x', reason: 'y'.repeat(4001) }],
    ['a payload that is an array', { action: 'x', reason: 'y', payload_json: '[1]' }],
    ['a payload that is a string', { action: 'x', reason: 'y', payload_json: '"prod"' }],
  ])('refuses %s in the schema and asks nobody', async (_name, args) => {
    g.seen.length = 0;
    const result = await client.callTool({ name: 'ask_approval', arguments: args });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/action|reason|payload_json/);
    expect(g.seen).toEqual([]);
  });

  it('gives the model instructions and annotates both tools', async () => {
    expect(client.getInstructions()).toContain('ask_approval');
    expect(client.getInstructions()).toContain('report_progress');
    const { tools } = await client.listTools();
    for (const name of ['report_progress', 'ask_approval']) {
      expect(tools.find((t) => t.name === name)?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      });
    }
  });
});

/** `switchboard mcp` as a runtime launches it; main.ts may not declare the command yet, so run() is imported directly then. */
function stdioCommand(): { command: string; args: string[] } {
  const program = join(ROOT, 'dist/cli/program.js');
  const declared = [CLI, program].some(
    (f) => existsSync(f) && /command\(['"]mcp['"]\)/.test(readFileSync(f, 'utf8')),
  );
  if (declared) return { command: process.execPath, args: [CLI, 'mcp'] };
  const entry = pathToFileURL(join(ROOT, 'dist/cli/mcp.js')).href;
  return {
    command: process.execPath,
    args: ['--input-type=module', '-e', `(await import(${JSON.stringify(entry)})).run()`],
  };
}

describe('switchboard mcp over stdio', () => {
  let g: Gateway;
  let client: Client;
  beforeAll(async () => {
    requireBuild();
    g = await startGateway(await freshStore('sqlite'));
    const { command, args } = stdioCommand();
    client = await connect(
      new StdioClientTransport({
        command,
        args,
        env: { PATH: process.env.PATH ?? '', SWITCHBOARD_URL: g.server.url, SWITCHBOARD_KEY: KEYS.agent },
        stderr: 'pipe',
      }),
    );
  });
  afterAll(async () => {
    await client?.close();
    await g?.cleanup();
  });

  it('lists the same two tools with the same schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'report_progress')?.inputSchema).toEqual(REPORT_PROGRESS_SCHEMA);
    expect(tools.find((t) => t.name === 'ask_approval')?.inputSchema).toEqual(ASK_APPROVAL_SCHEMA);
  });

  it('reports progress to the gateway over HTTP', async () => {
    const result = await client.callTool({
      name: 'report_progress',
      arguments: { stage: 'blocked', summary: 'need a DB password' },
    });
    expect(result.structuredContent).toMatchObject({ status: 'sent' });
    expect(g.seen.at(-1)?.message).toMatchObject({ stage: 'blocked', summary: 'need a DB password' });
  });

  it('refuses a smuggled recipient, and the gateway records it and alerts the owner (seed 000)', async () => {
    const before = g.seen.length;
    const result = await client.callTool({
      name: 'ask_approval',
      arguments: { action: 'wire money', reason: 'x', to: 'someone@example.com', chat_id: '42' },
    });
    expect(result.isError).toBe(true);
    const alert = await until(() =>
      g.seen.slice(before).find((x) => String(x.message.summary).includes('tried to choose recipients')),
    );
    expect(alert).toMatchObject({ destination: 'phone' });
    // Nothing of the refused call was reported or asked: the alert is the only message.
    expect(g.seen.slice(before).filter((x) => x !== alert)).toEqual([]);
    const blocked = (
      await g.server.services.log.list({ type: 'agent.notification.blocked', newestFirst: true, limit: 1 })
    ).map((e) => e.envelope);
    expect(blocked[0]?.subject.tool).toBe('ask_approval');
    expect(blocked[0]?.redacted_summary).toEqual({
      reason: 'recipient_in_tool_call',
      keys: ['to', 'chat_id'],
    });
    expect(JSON.stringify(blocked)).not.toContain('someone@example.com');
  });

  it('asks for approval through POST /v1/approvals?wait= and returns approved', async () => {
    g.seen.length = 0;
    const call = client.callTool(
      { name: 'ask_approval', arguments: { action: 'rotate keys', reason: 'leak drill' } },
      undefined,
      {
        onprogress: () => {},
        resetTimeoutOnProgress: true,
        timeout: 30_000,
      },
    );
    const id = await decideAnnounced(g, 'approve');
    expect((await call).structuredContent).toMatchObject({ outcome: 'approved', approval_id: id });
  }, 30_000);

  it('relays a Claude Code permission prompt to the phone and answers allow or deny once decided', async () => {
    expect(client.getServerCapabilities()?.experimental).toMatchObject({
      'claude/channel': {},
      'claude/channel/permission': {},
    });
    const verdicts: { request_id: string; behavior: string }[] = [];
    client.setNotificationHandler(
      z.object({
        method: z.literal('notifications/claude/channel/permission'),
        params: z.object({ request_id: z.string(), behavior: z.string() }),
      }),
      async (n) => {
        verdicts.push(n.params);
      },
    );
    const ask = (request_id: string, input_preview: string) =>
      client.notification({
        method: 'notifications/claude/channel/permission_request',
        params: { request_id, tool_name: 'Bash', description: 'Run the migration', input_preview },
      });
    g.seen.length = 0;
    await ask('abcde', '{"command":"npm run migrate"}');
    const announced = await until(() => g.seen.find((s) => s.message.kind === 'approval'));
    expect(announced.message.summary).toContain('Bash: {"command":"npm run migrate"}');
    await decideAnnounced(g, 'approve');
    await until(() => (verdicts.length === 1 ? true : undefined), 15_000);
    expect(verdicts).toEqual([{ request_id: 'abcde', behavior: 'allow' }]);
    g.seen.length = 0;
    await ask('fghij', '{"command":"rm -rf build"}');
    await decideAnnounced(g, 'reject', 'not now');
    await until(() => (verdicts.length === 2 ? true : undefined), 15_000);
    expect(verdicts[1]).toEqual({ request_id: 'fghij', behavior: 'deny' });
    // Not from Claude Code (an id it never makes): nobody is asked.
    g.seen.length = 0;
    await ask('NOT-AN-ID', '{}');
    await new Promise((r) => setTimeout(r, 300));
    expect(g.seen).toEqual([]);
  }, 30_000);

  it('answers a 2026-07-28 client statelessly on the same stdio server', async () => {
    const raw = new StdioClientTransport({
      ...stdioCommand(),
      env: { PATH: process.env.PATH ?? '', SWITCHBOARD_URL: g.server.url, SWITCHBOARD_KEY: KEYS.agent },
      stderr: 'pipe',
    });
    const answers: Record<string, unknown>[] = [];
    raw.onmessage = (m) => {
      answers.push(m as Record<string, unknown>);
    };
    await raw.start();
    try {
      const _meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      // No initialize first: that is the revision.
      await raw.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta } });
      await raw.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'report_progress',
          arguments: { stage: 'blocked', summary: 'stdio stateless' },
          _meta,
        },
      });
      await until(() => (answers.length >= 2 ? true : undefined), 15_000);
      const byId = Object.fromEntries(
        answers.map((a) => [String(a.id), a.result as Record<string, unknown>]),
      );
      expect(byId['1']).toMatchObject({
        resultType: 'complete',
        supportedVersions: ['2026-07-28', '2025-11-25'],
      });
      expect(byId['2']).toMatchObject({ resultType: 'complete', structuredContent: { status: 'sent' } });
      expect(g.seen.at(-1)?.message).toMatchObject({ summary: 'stdio stateless' });
    } finally {
      await raw.close();
    }
  }, 30_000);

  it('returns the approver comment with a reject, and gives the same instructions', async () => {
    g.seen.length = 0;
    const call = client.callTool(
      { name: 'ask_approval', arguments: { action: 'drop the cache', reason: 'stale' } },
      undefined,
      { onprogress: () => {}, resetTimeoutOnProgress: true, timeout: 30_000 },
    );
    const id = await decideAnnounced(g, 'reject', 'not during the sale');
    expect((await call).structuredContent).toEqual({
      outcome: 'rejected',
      approval_id: id,
      comment: 'not during the sale',
    });
    expect(client.getInstructions()).toContain('ask_approval');
  }, 30_000);
});
