import { createHash } from 'node:crypto';
import { LOCAL_TIME_SCRIPT } from '../web/page.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth } from '../server/testing.js';
import { deriveKey } from '../keys/derive.js';
import { deriveLinkKey, parseToken, signLink, verifyLink } from './links.js';
import { type ApprovalsHarness, approvalsHarness, TEST_LINK_KEY } from './testing.js';

const BASE = 'https://sb.example';

describe('link tokens', () => {
  const subject = {
    id: 'apr_01JAAAAAAAAAAAAAAAAAAAAAAA',
    action: 'deploy',
    plan_digest: 'sha256:ab',
    expires_at: 1_900_000_000_000,
  };

  it('verifies a token signed for exactly this approval', () => {
    const token = parseToken(signLink(TEST_LINK_KEY, subject))!;
    expect(verifyLink(TEST_LINK_KEY, token, subject)).toBe(true);
  });

  it('refuses a token when the action, plan digest, expiry or key differ', () => {
    const token = parseToken(signLink(TEST_LINK_KEY, subject))!;
    expect(verifyLink(TEST_LINK_KEY, token, { ...subject, action: 'deploy!' })).toBe(false);
    expect(verifyLink(TEST_LINK_KEY, token, { ...subject, plan_digest: 'sha256:cd' })).toBe(false);
    expect(verifyLink(TEST_LINK_KEY, token, { ...subject, expires_at: subject.expires_at + 1 })).toBe(false);
    expect(verifyLink(Buffer.alloc(32, 8), token, subject)).toBe(false);
  });

  it('parses nothing that is not shaped like a token', () => {
    for (const bad of [
      '',
      'x',
      `${subject.id}.1.short`,
      `tsk_01JAAAAAAAAAAAAAAAAAAAAAAA.1.${'A'.repeat(43)}`,
      `${subject.id}.-1.${'A'.repeat(43)}`,
    ]) {
      expect(parseToken(bad)).toBeUndefined();
    }
  });

  it('derives a different 32-byte link key from a vault key, deterministically', () => {
    const vault = Buffer.alloc(32, 1);
    expect(deriveLinkKey(vault)).toHaveLength(32);
    expect(deriveLinkKey(vault).equals(deriveLinkKey(vault))).toBe(true);
    expect(deriveLinkKey(vault).equals(vault)).toBe(false);
  });

  it('derives the link key as the vault key’s approval-link key (pinned in keys/derive.test.ts)', () => {
    const vault = Buffer.alloc(32, 1);
    expect(deriveLinkKey(vault).equals(deriveKey(vault, 'approvalLink'))).toBe(true);
  });
});

describe.each(await dialects())('signed approval links on %s', (dialect) => {
  let h: ApprovalsHarness;
  let id: string;
  let links: { pageUrl: string; approveUrl: string; rejectUrl: string };
  beforeEach(async () => {
    h = await approvalsHarness(dialect);
    const res = await h.ask({
      action: '<script>alert(1)</script> deploy',
      reason: 'ship "it" & go',
      payload_json: '{"cmd":"</pre><b>x"}',
    });
    id = ((await res.json()) as { id: string }).id;
    links = await h.approvals.approvalLinks(id, `${BASE}/`);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const path = (url: string) => url.slice(BASE.length);
  const form = (decision: string) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `decision=${decision}`,
  });
  const state = async () =>
    (
      (await (await h.app.request(`/v1/approvals/${id}`, { headers: auth('approver') })).json()) as {
        status: string;
      }
    ).status;

  it('builds a page URL under the base URL and approve/reject targets beside it', () => {
    expect(links.pageUrl).toMatch(new RegExp(`^${BASE}/a/${id}\\.\\d+\\.[A-Za-z0-9_-]{43}$`));
    expect(links.approveUrl).toBe(`${links.pageUrl}?decision=approve`);
    expect(links.rejectUrl).toBe(`${links.pageUrl}?decision=reject`);
  });

  it('shows the confirmation page on GET and changes nothing, however often it is fetched', async () => {
    for (const url of [links.pageUrl, links.approveUrl, links.rejectUrl]) {
      const res = await h.app.request(path(url));
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain('<form method="post">');
      expect(html).toContain('value="approve"');
    }
    expect(await state()).toBe('pending');
    expect(await h.eventTypes()).toEqual(['agent.approval.requested']);
  });

  it('serves the page with a strict CSP, no caching and no referrer, and escapes what the agent wrote', async () => {
    const res = await h.app.request(path(links.pageUrl));
    // One script may run, the page's own (local expiry time), allowed by its hash: nothing the agent wrote.
    const hash = createHash('sha256').update(LOCAL_TIME_SCRIPT).digest('base64');
    expect(res.headers.get('content-security-policy')).toBe(
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; script-src 'sha256-${hash}'`,
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).toContain(`<script>${LOCAL_TIME_SCRIPT}</script>`);
    expect(html).not.toContain('<b>x');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62; deploy');
    expect(html).toContain('ship &#34;it&#34; &#38; go');
    const digest = (
      (await (await h.app.request(`/v1/approvals/${id}`, { headers: auth('approver') })).json()) as {
        plan_digest: string;
      }
    ).plan_digest;
    expect(html).toContain(digest);
  });

  it('approves once on the POST from the page; a replayed POST shows already decided and changes nothing', async () => {
    const first = await h.app.request(path(links.pageUrl), form('approve'));
    expect(first.status).toBe(200);
    expect(await first.text()).toContain('Approved');
    expect(await state()).toBe('approved');
    const replay = await h.app.request(path(links.pageUrl), form('reject'));
    expect(replay.status).toBe(409);
    expect(await replay.text()).toContain('Already decided');
    expect(await state()).toBe('approved');
    const again = await h.app.request(path(links.pageUrl));
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('already decided');
    expect((await h.eventTypes()).filter((t) => t !== 'agent.approval.requested')).toEqual([
      'agent.approval.approved',
    ]);
    const row = await h.approvals.get(id);
    expect(row?.decided_by).toBe('link');
  });

  it('rejects on a bodiless POST to the reject target (a phone action button)', async () => {
    const res = await h.app.request(path(links.rejectUrl), { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await state()).toBe('rejected');
  });

  it('answers forged and tampered tokens with 401 and changes nothing', async () => {
    const token = path(links.pageUrl).slice('/a/'.length);
    const [tid, exp, mac] = token.split('.') as [string, string, string];
    const flipped = `${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    const other = ((await (await h.ask()).json()) as { id: string }).id;
    for (const bad of [
      `${tid}.${exp}.${flipped}`,
      `${tid}.${Number(exp) + 60_000}.${mac}`,
      `${other}.${exp}.${mac}`,
      'garbage',
      `${tid}.${exp}`,
    ]) {
      const get = await h.app.request(`/a/${bad}`);
      expect(get.status).toBe(401);
      const post = await h.app.request(`/a/${bad}`, form('approve'));
      expect(post.status).toBe(401);
      expect(await post.text()).toContain('Invalid link');
    }
    expect(await state()).toBe('pending');
  });

  it('says expired (410) for a link whose approval has expired, on GET and POST', async () => {
    h.clock.now += 16 * 60 * 1000;
    expect((await h.app.request(path(links.pageUrl))).status).toBe(410);
    const post = await h.app.request(path(links.pageUrl), form('approve'));
    expect(post.status).toBe(410);
    expect(await post.text()).toContain('Expired');
    expect((await h.approvals.row(id))?.state).toBe('pending');
  });

  it('answers a POST without a valid decision with 400, a JSON body with 415 and a large one with 413', async () => {
    expect((await h.app.request(path(links.pageUrl), form('maybe'))).status).toBe(400);
    expect((await h.app.request(path(links.pageUrl), { method: 'POST' })).status).toBe(400);
    const jsonBody = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"decision":"approve"}',
    };
    expect((await h.app.request(path(links.pageUrl), jsonBody)).status).toBe(415);
    const large = { ...form('approve'), body: `decision=approve&pad=${'x'.repeat(25 * 1024)}` };
    expect((await h.app.request(path(links.pageUrl), large)).status).toBe(413);
    expect(await state()).toBe('pending');
  });

  it('decides on the token alone: a bearer header is neither needed nor consulted', async () => {
    const res = await h.app.request(path(links.pageUrl), {
      ...form('approve'),
      headers: { ...form('approve').headers, ...auth('agent') },
    });
    expect(res.status).toBe(200);
    expect(await state()).toBe('approved');
  });
});
