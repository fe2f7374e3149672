import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/index.js';
import { gateModule } from '../gate/module.js';
import { reachModule } from '../reach/module.js';
import { ticketsSqlite } from '../reach/testing.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { listTools, touch } from './reach.js';
import { CLI, requireBuild } from './testing.js';

const run = promisify(execFile);

describe('switchboard tools list and switchboard touch', () => {
  const db = ticketsSqlite();
  let gw: TestGateway;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    gw = await testGateway({
      dialect: 'sqlite',
      config: {
        auth: { keys: [{ name: 'bot', role: 'agent', key: KEYS.agent }] },
        tools: {
          'ticket.query': {
            kind: 'sql',
            description: 'Look up tickets by status',
            input_schema: {
              type: 'object',
              required: ['status'],
              properties: {
                status: { enum: ['open', 'closed', 'pending'] },
                limit: { type: 'integer', default: 2 },
              },
            },
            sql: {
              database: db.path,
              query: 'SELECT id, status FROM tickets WHERE status = :status ORDER BY id LIMIT :limit',
            },
          },
          'report.build': {
            kind: 'command',
            channel: 'async',
            command: ['/bin/sh', '-c', 'cat'],
            input_schema: { type: 'object', properties: { q: { type: 'string' } } },
          },
        },
      },
      modules: [
        coreModule(),
        approvalsModule(),
        gateModule({ watch: false, sighup: false }),
        reachModule({ env: {} }),
      ],
    });
    env = { SWITCHBOARD_URL: gw.gateway.url, SWITCHBOARD_KEY: KEYS.agent };
  });
  afterAll(async () => {
    await gw?.stop();
    db.cleanup();
  });

  it('lists the registry one tool per line', async () => {
    const lines: string[] = [];
    await listTools({ env, out: (l) => lines.push(l) });
    expect(lines).toContain('ticket.query  sql  read  sync  8s  Look up tickets by status');
    expect(lines.some((l) => l.startsWith('memory_search  memory  read'))).toBe(true);
  });

  it('prints the processed result as field: value text', async () => {
    const lines: string[] = [];
    await touch('ticket.query', '{"status":"open"}', { env, out: (l) => lines.push(l) });
    expect(lines).toEqual(['id: 1, status: open\nid: 4, status: open']);
  });

  it('waits for an async tool and prints its result', async () => {
    const lines: string[] = [];
    await touch('report.build', '{"q":"q3"}', { env, out: (l) => lines.push(l), pollMs: 20 });
    expect(lines).toEqual(['q: q3']);
  });

  it('sends --callback with the touch (refused here: this gateway runs no delivery module)', async () => {
    await expect(
      touch('report.build', '{"q":"q3"}', { env, channel: 'async', callback: 'hook', out: () => {} }),
    ).rejects.toThrow('INVALID_PARAMS: callback hook needs the delivery module');
  });

  it('fails with the code and message a model would get', async () => {
    await expect(touch('ticket.qeury', '{}', { env, out: () => {} })).rejects.toThrow(
      'TOOL_NOT_FOUND: no tool named ticket.qeury; did you mean ticket.query?',
    );
    await expect(touch('ticket.query', 'not json', { env })).rejects.toThrow('the params are not JSON');
  });

  it('has --help and exits 1 with one line on failure (the built binary)', async () => {
    requireBuild();
    const help = await run('node', [CLI, 'touch', '--help']);
    expect(help.stdout).toContain('--request-id <id>');
    const listHelp = await run('node', [CLI, 'tools', 'list', '--help']);
    expect(listHelp.stdout).toContain('--json');
    const failed = await run('node', [CLI, 'touch', 'ticket.query', '{"status":"shut"}'], {
      env: { ...process.env, ...env },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((failed as { code: number }).code).toBe(1);
    expect((failed as { stderr: string }).stderr).toMatch(
      /^switchboard: INVALID_PARAMS: ticket\.query: params\.status must be one of/,
    );
    const ok = await run('node', [CLI, 'touch', 'ticket.query', '{"status":"closed","limit":1}'], {
      env: { ...process.env, ...env },
    });
    expect(ok.stdout).toBe('id: 3, status: closed\n');
  });
});
