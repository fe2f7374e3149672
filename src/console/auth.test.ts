import { afterEach, describe, expect, it } from 'vitest';
import { auth, KEYS } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { type ConsoleHarness, consoleHarness, cookieOf, csrfOf, page, post, signIn } from './testing.js';

const DIALECTS = await dialects();

describe.each(DIALECTS)('console sign-in and sessions on %s', (dialect) => {
  let h: ConsoleHarness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it('sends a visitor without a session to the sign-in page, keeping where they were going', async () => {
    h = await consoleHarness(dialect);
    const res = await h.t.app.request('/console/tasks?state=working', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/login?next=%2Fconsole%2Ftasks%3Fstate%3Dworking');
    const api = await h.t.app.request('/console/tasks');
    expect(api.status).toBe(401);
  });

  it('signs an approver in with an HttpOnly, SameSite=Strict cookie scoped to /console', async () => {
    h = await consoleHarness(dialect);
    const { res } = await signIn(h.t.app, KEYS.approver);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/');
    const line = res.headers.getSetCookie().find((l) => l.startsWith('sb_console='))!;
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Strict/);
    expect(line).toMatch(/Path=\/console/);
    expect(line).toMatch(/Max-Age=43200/);
  });

  it('marks the cookie Secure when the gateway is reached over HTTPS', async () => {
    h = await consoleHarness(dialect);
    const form = await h.t.app.request('/console/login', { headers: { 'x-forwarded-proto': 'https' } });
    expect(form.headers.getSetCookie()[0]).toMatch(/Secure/);
  });

  it('refuses an agent key and an unknown key, and sets no session', async () => {
    h = await consoleHarness(dialect);
    const agent = await signIn(h.t.app, KEYS.agent);
    expect(agent.res.status).toBe(403);
    expect(await agent.res.text()).toContain('Agent keys cannot sign in');
    expect(agent.signed).toBeUndefined();
    const unknown = await signIn(h.t.app, 'not-a-key-at-all-0123456789');
    expect(unknown.res.status).toBe(401);
    expect(unknown.signed).toBeUndefined();
  });

  it('refuses a sign-in posted without the form’s own token (login CSRF)', async () => {
    h = await consoleHarness(dialect);
    const res = await h.t.app.request('/console/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: KEYS.admin }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('csrf_failed');
    expect(cookieOf(res, 'sb_console')).toBeUndefined();
  });

  it('never sends a sign-in back to another site', async () => {
    h = await consoleHarness(dialect);
    const form = await h.t.app.request('/console/login?next=//evil.example/');
    const token = cookieOf(form, 'sb_console_login')!;
    const html = await form.text();
    expect(html).toContain('name="next" value="/console/"');
    const res = await h.t.app.request('/console/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `sb_console_login=${token}` },
      body: new URLSearchParams({ _csrf: csrfOf(html), key: KEYS.admin, next: '/\\evil.example' }),
    });
    expect(res.headers.get('location')).toBe('/console/');
  });

  it('refuses a POST without the CSRF token, with a wrong one, or from another origin', async () => {
    h = await consoleHarness(dialect);
    const ask = await h.t.app.request('/v1/approvals', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'deploy', reason: 'ship' }),
    });
    const { id } = (await ask.json()) as { id: string };
    const path = `/console/approvals/${id}/decision`;
    for (const res of [
      await post(h.t.app, path, h.approver, { decision: 'approve' }, { csrf: null }),
      await post(h.t.app, path, h.approver, { decision: 'approve' }, { csrf: 'x'.repeat(32) }),
      await post(
        h.t.app,
        path,
        h.approver,
        { decision: 'approve' },
        { headers: { origin: 'https://evil.example' } },
      ),
    ]) {
      expect(res.status).toBe(403);
      // A foreign Origin is refused by the server-wide Host/Origin check before the console's CSRF check.
      expect(['csrf_failed', 'origin_not_allowed']).toContain(
        ((await res.json()) as { error: { code: string } }).error.code,
      );
    }
    const after = await h.t.app.request(`/v1/approvals/${id}`, { headers: auth('approver') });
    expect(((await after.json()) as { status: string }).status).toBe('pending');
  });

  it('takes a bearer key instead of the cookie, without a CSRF token (a browser never sends one by itself)', async () => {
    h = await consoleHarness(dialect);
    const res = await h.t.app.request('/console/approvals?fragment=1', { headers: auth('approver') });
    expect(res.status).toBe(200);
    const agent = await h.t.app.request('/console/approvals?fragment=1', { headers: auth('agent') });
    expect(agent.status).toBe(403);
  });

  it('ends the session on sign-out: the cookie no longer opens a page', async () => {
    h = await consoleHarness(dialect);
    const out = await post(h.t.app, '/console/logout', h.approver);
    expect(out.status).toBe(303);
    const after = await page(h.t.app, '/console/', h.approver);
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toMatch(/^\/console\/login/);
  });

  it('ends a session when its key is removed from the ring', async () => {
    h = await consoleHarness(dialect);
    const secret = 'runtime-admin-key-0123456789abcdef';
    h.t.services.keys.add(secret, { name: 'temp', role: 'admin' });
    const { signed } = await signIn(h.t.app, secret);
    expect((await page(h.t.app, '/console/events', signed!)).status).toBe(200);
    h.t.services.keys.remove(secret);
    expect((await page(h.t.app, '/console/events', signed!)).status).toBe(303);
  });

  it('ends a session at its expiry', async () => {
    h = await consoleHarness(dialect, { config: { console: { session_ttl_seconds: 60 } } });
    const { signed } = await signIn(h.t.app, KEYS.admin);
    expect((await page(h.t.app, '/console/', signed!)).status).toBe(200);
    await h.t.services.db.query({ text: 'UPDATE console_sessions SET expires_at = 1' });
    expect((await page(h.t.app, '/console/', signed!)).status).toBe(303);
  });

  it('shows approvers approvals, tasks and sessions, and admins everything', async () => {
    h = await consoleHarness(dialect);
    for (const path of ['/console/', '/console/tasks', '/console/sessions']) {
      expect((await page(h.t.app, path, h.approver)).status).toBe(200);
    }
    for (const path of [
      '/console/events',
      '/console/deliveries',
      '/console/policy',
      '/console/events/verify',
    ]) {
      expect((await page(h.t.app, path, h.approver)).status).toBe(403);
      expect((await page(h.t.app, path, h.admin)).status).toBe(200);
    }
  });

  it('serves every page with a CSP that allows no inline script or style', async () => {
    h = await consoleHarness(dialect);
    const res = await page(h.t.app, '/console/', h.admin);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/\sstyle=/);
  });
});
