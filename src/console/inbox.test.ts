import { afterEach, describe, expect, it } from 'vitest';
import { approvalsPort } from '../approvals/port.js';
import { auth } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { LiveHub, topicOf } from './live.js';
import { surface } from './pages/approvals.js';
import { type ConsoleHarness, consoleHarness, page, post, XSS_CORPUS } from './testing.js';

const DIALECTS = await dialects();

async function ask(h: ConsoleHarness, body: Record<string, unknown>): Promise<string> {
  const res = await h.t.app.request('/v1/approvals', {
    method: 'POST',
    headers: { ...auth('agent'), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

describe.each(DIALECTS)('the approvals inbox on %s', (dialect) => {
  let h: ConsoleHarness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it('shows a pending approval with its action, input, asker, digest and time left, and counts it in the tab title', async () => {
    h = await consoleHarness(dialect);
    const id = await ask(h, { action: 'deploy prod', reason: 'release 2.1', payload_json: '{"ref":"v2.1"}' });
    const html = await (await page(h.t.app, '/console/', h.approver)).text();
    expect(html).toContain('<title>(1) Approvals · Switchboard</title>');
    expect(html).toContain(`id="${id}"`);
    expect(html).toContain('deploy prod');
    expect(html).toContain('release 2.1');
    expect(html).toContain('&#34;ref&#34;: &#34;v2.1&#34;');
    expect(html).toContain('bot');
    const view = await h.t.port(approvalsPort).get(id);
    expect(html).toContain(view!.plan_digest);
    expect(html).toMatch(/\d+m \d+s left/);
    const other = await (await page(h.t.app, '/console/tasks', h.approver)).text();
    expect(other).toContain('<title>(1) Tasks · Switchboard</title>');
  });

  it('approves with a comment through the approvals port and lists who decided it, from the console', async () => {
    h = await consoleHarness(dialect);
    const id = await ask(h, { action: 'deploy prod', reason: 'release' });
    const res = await post(h.t.app, `/console/approvals/${id}/decision`, h.approver, {
      decision: 'approve',
      comment: 'go ahead, watch the error rate',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, status: 'approved', decided_by: 'me' });
    const view = await h.t.port(approvalsPort).get(id);
    expect(view).toMatchObject({
      state: 'approved',
      decided_by: 'me',
      comment: 'go ahead, watch the error rate',
    });
    const [event] = await h.t.services.log.list({ type: 'agent.approval.approved', limit: 1 });
    expect(event!.envelope.redacted_summary['via']).toBe('console');
    const html = await (await page(h.t.app, '/console/', h.approver)).text();
    expect(html).toContain('<title>Approvals · Switchboard</title>');
    expect(html).toMatch(
      /<td data-label="Decided by"><div class="cell">me<\/div><\/td><td data-label="From"><div class="cell">console<\/div><\/td>/,
    );
    expect(html).toContain('go ahead, watch the error rate');
  });

  it('answers a second decision with a clear 409 and changes nothing', async () => {
    h = await consoleHarness(dialect);
    const id = await ask(h, { action: 'deploy', reason: 'r' });
    await post(h.t.app, `/console/approvals/${id}/decision`, h.approver, { decision: 'reject' });
    const again = await post(h.t.app, `/console/approvals/${id}/decision`, h.admin, { decision: 'approve' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('already_decided');
    expect((await h.t.port(approvalsPort).get(id))?.state).toBe('rejected');
  });

  it('refuses a malformed decision form with a 4xx and decides nothing', async () => {
    h = await consoleHarness(dialect);
    const id = await ask(h, { action: 'deploy', reason: 'r' });
    const path = `/console/approvals/${id}/decision`;
    expect((await post(h.t.app, path, h.approver, { decision: 'maybe' })).status).toBe(400);
    expect((await post(h.t.app, path, h.approver, { decision: 'approve', colour: 'red' })).status).toBe(400);
    expect((await post(h.t.app, path, h.approver, { decision: ['approve', 'reject'] })).status).toBe(400);
    expect(
      (await post(h.t.app, path, h.approver, { decision: 'approve', comment: 'x'.repeat(2001) })).status,
    ).toBe(400);
    expect(
      (await post(h.t.app, '/console/approvals/apr_nope/decision', h.approver, { decision: 'approve' }))
        .status,
    ).toBe(404);
    const json = await h.t.app.request(path, {
      method: 'POST',
      headers: {
        cookie: h.approver.cookie,
        'x-csrf-token': h.approver.csrf,
        'content-type': 'application/json',
      },
      body: '{"decision":"approve"}',
    });
    expect(json.status).toBe(415);
    const big = await post(h.t.app, path, h.approver, { decision: 'approve', comment: 'x'.repeat(70_000) });
    expect(big.status).toBe(413);
    expect((await h.t.port(approvalsPort).get(id))?.state).toBe('pending');
  });

  it('renders everything an agent wrote as text', async () => {
    h = await consoleHarness(dialect);
    for (const text of XSS_CORPUS) {
      await ask(h, {
        action: text,
        reason: text,
        payload_json: JSON.stringify({ note: text }),
        resource: text,
      });
    }
    const html = await (await page(h.t.app, '/console/', h.approver)).text();
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<script>window');
    expect(html).not.toContain('<svg');
    expect(html).not.toMatch(/href="javascript:/i);
    expect(html).not.toMatch(/<[^>]*\son(error|load)=/i);
    expect(html).toContain('&#60;img src=x onerror=&#34;window.__xss=1&#34;&#62;');
  });

  it('tells where each decision came from: console, API or CLI, phone link, chat', async () => {
    h = await consoleHarness(dialect);
    const approvals = h.t.port(approvalsPort);
    const viaApi = await ask(h, { action: 'a1', reason: 'r' });
    await h.t.app.request(`/v1/approvals/${viaApi}/decision`, {
      method: 'POST',
      headers: { ...auth('approver'), 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    const viaLink = await ask(h, { action: 'a2', reason: 'r' });
    const links = await approvals.approvalLinks!(viaLink, 'http://sb.test');
    const path = new URL(links.pageUrl).pathname;
    await h.t.app.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'decision=reject',
    });
    const viaSlack = await ask(h, { action: 'a3', reason: 'r' });
    await approvals.decide(viaSlack, 'approve', { name: 'slack:U123', role: 'approver' });
    const html = await (await page(h.t.app, '/console/', h.approver)).text();
    expect(html).toContain('<td data-label="From"><div class="cell">API or CLI</div></td>');
    expect(html).toContain('<td data-label="From"><div class="cell">phone link (page or ntfy)</div></td>');
    expect(html).toContain('<td data-label="From"><div class="cell">Slack</div></td>');
    expect(surface('telegram:42', 'key', 'approved')).toBe('Telegram');
    expect(surface(null, undefined, 'expired')).toBe('nobody (it expired)');
  });

  it('serves the live region alone for the script, with the pending count in a header', async () => {
    h = await consoleHarness(dialect);
    await ask(h, { action: 'deploy', reason: 'r' });
    const res = await h.t.app.request('/console/?fragment=1', { headers: { cookie: h.approver.cookie } });
    expect(res.headers.get('x-pending-count')).toBe('1');
    const html = await res.text();
    expect(html.startsWith('<div id="live"')).toBe(true);
    expect(html).not.toContain('<html');
  });
});

describe('the live hub', () => {
  it('fans an approval event out to approvers and admins, a delivery event to admins only', () => {
    const hub = new LiveHub();
    const got: string[] = [];
    hub.add({ role: 'approver', sessionId: 's1', send: (t) => got.push(`approver:${t}`), close: () => {} });
    hub.add({ role: 'admin', sessionId: 's2', send: (t) => got.push(`admin:${t}`), close: () => {} });
    hub.publish('agent.approval.requested');
    hub.publish('integration.delivery.dead');
    hub.publish('agent.tool.requested');
    expect(got).toEqual(['approver:approvals', 'admin:approvals', 'admin:deliveries']);
  });

  it('takes no event from the relay while no browser is connected', () => {
    const hub = new LiveHub();
    const sub = hub.subscriber();
    expect(sub.accepts('agent.approval.requested')).toBe(false);
    hub.add({ role: 'admin', sessionId: undefined, send: () => {}, close: () => {} });
    expect(sub.accepts('agent.approval.requested')).toBe(true);
    expect(sub.accepts('agent.tool.requested')).toBe(false);
    expect(topicOf('agent.task.canceled')).toBe('tasks');
  });

  it('closes the streams of a session that signs out', () => {
    const hub = new LiveHub();
    const closed: string[] = [];
    const client = (id: string) => ({
      role: 'admin' as const,
      sessionId: id,
      send: () => {},
      close: () => {
        closed.push(id);
        hub.remove(c);
      },
    });
    const c = client('a');
    hub.add(c);
    hub.add(client('b'));
    hub.closeSession('a');
    expect(closed).toEqual(['a']);
    expect(hub.size).toBe(1);
  });
});
