import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { testEgress } from '../egress/testing.js';
import { harness, launchRequest, type TasksHarness, taskEvents } from './testing.js';

/**
 * `http` actions leave through egress like every other outbound request. The metadata case runs over
 * loopback-only sockets (`testEgress`), so even a broken guard could not send a packet there; the
 * default-guard case targets 127.0.0.1 only.
 */

let server: Server;
let endpoint = '';
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits += 1;
    req.resume();
    req.on('end', () => res.writeHead(202).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/agent`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

describe.each(await dialects())('http actions through the egress guard (%s)', (dialect) => {
  let h: TasksHarness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  it('refuses an http action aimed at the cloud metadata address and records the task as blocked', async () => {
    const egress = testEgress([]);
    h = await harness(dialect, { module: { egress } });
    const path = '/latest/meta-data/iam/security-credentials/';
    // Plain http is refused first (not listed); over https the address itself is the reason.
    const cases = [
      { url: `http://169.254.169.254${path}`, blocked: 'https_required' },
      { url: `https://169.254.169.254${path}`, blocked: 'metadata' },
    ];
    for (const c of cases) {
      const view = await h.runner.launch(await launchRequest(h, { type: 'http', url: c.url }));
      expect(view.state).toBe('failed');
      const error = (await h.runner.row(view.id))?.error;
      expect(error).toMatch(new RegExp(`^blocked \\(${c.blocked}\\): .*169\\.254\\.169\\.254`));
      expect(error).not.toContain(path);
      const events = await taskEvents(h, view.id);
      expect(events.map((e) => e.type)).toEqual(['agent.task.submitted', 'agent.task.failed']);
      expect(events[1]?.redacted_summary).toMatchObject({ reason: error, blocked_reason: c.blocked });
    }
    await egress.close();
  });

  it('guards the default poster with egress.allow: an unlisted endpoint on 127.0.0.1 gets nothing', async () => {
    h = await harness(dialect);
    const before = hits;
    const view = await h.runner.launch(await launchRequest(h, { type: 'http', url: endpoint }));
    expect(view.state).toBe('failed');
    expect((await h.runner.row(view.id))?.error).toBe(
      'blocked (https_required): plain http to 127.0.0.1 needs the host in egress.allow',
    );
    const failed = (await taskEvents(h, view.id)).find((e) => e.type === 'agent.task.failed');
    expect(failed?.redacted_summary).toMatchObject({ blocked_reason: 'https_required' });
    expect(hits).toBe(before);
  });

  it('posts to an endpoint that egress.allow lists', async () => {
    const egress = testEgress(['127.0.0.1']);
    h = await harness(dialect, { module: { egress } });
    const before = hits;
    const view = await h.runner.launch(await launchRequest(h, { type: 'http', url: endpoint }));
    expect(view.state).toBe('working');
    expect(hits).toBe(before + 1);
    await egress.close();
  });
});
