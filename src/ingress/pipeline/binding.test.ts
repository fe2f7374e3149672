import { afterEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../../envelope/index.js';
import { coreModule } from '../../server/core-routes.js';
import { type TestApp, type TestGateway, testApp, testGateway } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { parseConfig } from '../../server/config.js';
import { tasksPort } from '../../tasks/port.js';
import { FakeTasks, GITHUB_SECRET, githubDelivery, githubExample, ingressHarness } from '../testing.js';
import { boundTenant, parseCidr } from './binding.js';

/** GitHub's published webhook ranges (`hooks` of https://api.github.com/meta), as the docs example lists them. */
const GITHUB_HOOKS = [
  '192.30.252.0/22',
  '185.199.108.0/22',
  '140.82.112.0/20',
  '143.55.64.0/20',
  '2a0a:a440::/29',
  '2606:50c0::/32',
];

describe('binding parts', () => {
  it('reads addresses and CIDRs of both families, and refuses what is neither', () => {
    expect(parseCidr('192.30.252.0/22')).toEqual({ address: '192.30.252.0', prefix: 22, family: 'ipv4' });
    expect(parseCidr('2a0a:a440::/29')).toMatchObject({ prefix: 29, family: 'ipv6' });
    expect(parseCidr('10.0.0.1')).toMatchObject({ prefix: 32 });
    for (const bad of ['10.0.0.0/33', 'github.com', '10.0.0.0/8/1', '10.0.0.0/x', ''])
      expect(parseCidr(bad)).toBeUndefined();
  });

  it('binds by the most specific id: the repository before its installation', () => {
    const binding = { installation_id: '42', repository: 'octo/hello', organization: 'octo' };
    expect(boundTenant(binding, { '42': 'acme', 'octo/hello': 'beta' })).toEqual({
      tenant: 'beta',
      key: 'repository',
      id: 'octo/hello',
    });
    expect(boundTenant(binding, { '42': 'acme' })).toMatchObject({ tenant: 'acme', key: 'installation_id' });
    expect(boundTenant(binding, { '43': 'acme' })).toBeUndefined();
    expect(boundTenant(binding, { constructor: 'x' })).toBeUndefined();
  });
});

describe.each(await dialects())('ingress binding on %s', (dialect) => {
  let t: TestApp | undefined;
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await t?.cleanup();
    await gw?.stop();
    t = undefined;
    gw = undefined;
  });

  const events = async (log: TestApp['services']['log'], type: string): Promise<Envelope[]> =>
    (await log.list({ type, limit: 100 })).map((e) => e.envelope);

  async function gateway(github: Record<string, unknown>, server: Record<string, unknown> = {}) {
    const h = ingressHarness([]);
    const sources = h.config.sources as Record<string, unknown>;
    sources.github = { type: 'github', secret: GITHUB_SECRET, ...github };
    gw = await testGateway({
      dialect,
      modules: [coreModule(), h.ingress],
      config: { ...h.config, server: { ...(h.config.server as object), ...server } },
    });
    return gw.gateway;
  }
  async function send(url: string, extra: Record<string, string> = {}) {
    const d = await githubDelivery('push', githubExample('push'));
    return fetch(`${url}/v1/ingress/github`, {
      method: 'POST',
      headers: { ...d.headers, ...extra },
      body: d.body,
    });
  }

  it('refuses a sender off allow_ips over a real socket, and never believes X-Forwarded-For unasked', async () => {
    const g = await gateway({ allow_ips: GITHUB_HOOKS });
    const res = await send(g.url, { 'x-forwarded-for': '192.30.252.10' });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('address_not_allowed');
    expect(body.error.message).toBe('sender 127.0.0.1 is not in sources.github.allow_ips');
    const [rejected] = await events(g.services.log, 'integration.webhook.rejected');
    expect(rejected?.redacted_summary).toMatchObject({ reason: 'address_not_allowed', address: '127.0.0.1' });
    expect(await events(g.services.log, 'integration.webhook.accepted')).toHaveLength(0);
  });

  it('accepts a listed peer, and behind a trusted proxy reads X-Forwarded-For from the right', async () => {
    const direct = await gateway({ allow_ips: ['127.0.0.1/32'] });
    expect((await send(direct.url)).status).toBe(202);
    await gw!.stop();
    gw = undefined;

    const proxied = await gateway({ allow_ips: GITHUB_HOOKS }, { trusted_proxies: ['127.0.0.0/8'] });
    expect((await send(proxied.url, { 'x-forwarded-for': '192.30.252.10' })).status).toBe(202);
    // A sender that writes a GitHub address itself: the proxy appends the real one, which is what counts.
    const spoofed = await send(proxied.url, { 'x-forwarded-for': '192.30.252.10, 203.0.113.9' });
    expect(spoofed.status).toBe(403);
    expect(((await spoofed.json()) as { error: { message: string } }).error.message).toContain('203.0.113.9');
    expect((await send(proxied.url, { 'x-forwarded-for': '2a0a:a440::5, 127.0.0.1' })).status).toBe(202);
  });

  it('chooses the tenant by the verified installation or repository, and stores and refuses an unbound one', async () => {
    const h = ingressHarness([{ id: 'pr', source: 'github', action: { type: 'notify' } }]);
    const sources = h.config.sources as Record<string, unknown>;
    const example = githubExample('pull_request', 'opened');
    // A GitHub App's deliveries name the installation; the example is a repository hook's, so add one.
    example.installation = { id: 4242, node_id: 'MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==' };
    const installation = '4242';
    sources.github = {
      type: 'github',
      secret: GITHUB_SECRET,
      tenants: { [installation]: 'acme', 'Codertocat/Hello-World': 'beta' },
    };
    t = await testApp({ dialect, config: h.config, modules: [coreModule(), h.ingress] });
    t.provide(tasksPort, new FakeTasks());
    const post = async (payload: unknown, delivery?: string) => {
      const d = await githubDelivery('pull_request', payload, delivery ? { delivery } : {});
      return t!.app.request('/v1/ingress/github', { method: 'POST', headers: d.headers, body: d.body });
    };

    expect((await post(example)).status).toBe(202);
    const [accepted] = await events(t.services.log, 'integration.webhook.accepted');
    expect(accepted?.tenant_id).toBe('beta');
    expect(accepted?.redacted_summary.bound_by).toEqual({ key: 'repository', id: 'Codertocat/Hello-World' });

    const other = structuredClone(example);
    (other.repository as Record<string, unknown>).full_name = 'someone/else';
    expect((await post(other)).status).toBe(202);
    const second = (await events(t.services.log, 'integration.webhook.accepted'))[1];
    expect(second?.tenant_id).toBe('acme');

    const stranger = structuredClone(other);
    (stranger.installation as Record<string, unknown>).id = 999;
    const res = await post(stranger, 'd-unbound');
    expect(res.status).toBe(403);
    const err = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('source_unbound');
    expect(err.message).toContain('installation_id 999');
    expect(err.message).toContain('sources.github.tenants');
    const [rejected] = await events(t.services.log, 'integration.webhook.rejected');
    expect(rejected?.redacted_summary).toMatchObject({ reason: 'source_unbound', delivery_id: 'd-unbound' });
    expect(rejected?.payload_ref).toBeTruthy();
    const [row] = await t.services.db.query<{ status: string }>({
      text: `SELECT status FROM ingress_deliveries WHERE delivery_id = 'd-unbound'`,
    });
    expect(row?.status).toBe('refused');
    // A redelivery is refused again (not a silent 200 duplicate) until the id is bound.
    expect((await post(stranger, 'd-unbound')).status).toBe(403);
    await t.services.relay.drain();
    expect(await events(t.services.log, 'integration.webhook.admitted')).toHaveLength(2);
  });
});

describe('binding config', () => {
  it('stops start-up on a malformed CIDR in allow_ips or server.trusted_proxies', () => {
    const source = { type: 'github', secret: GITHUB_SECRET };
    expect(() =>
      parseConfig({ sources: { github: { ...source, allow_ips: ['github.com'] } } }, 'test'),
    ).toThrow(/sources\.github\.allow_ips\[0\]: an address or CIDR/);
    expect(() =>
      parseConfig({ sources: { github: source }, server: { trusted_proxies: ['10.0.0.0/99'] } }, 'test'),
    ).toThrow(/server\.trusted_proxies\[0\]: an address or CIDR/);
    expect(() => parseConfig({ sources: { github: { ...source, tenants: { '42': '' } } } }, 'test')).toThrow(
      /sources\.github\.tenants/,
    );
  });
});
