import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryModule } from '../delivery/module.js';
import { FAST, type ScriptedReceiver, SECRET, startScriptedReceiver } from '../delivery/testing.js';
import { loopbackOnly } from '../egress/testing.js';
import { auth, KEYS } from '../server/testing.js';
import { tasksPort } from '../tasks/port.js';
import { type ConsoleHarness, consoleHarness, TOOLS, XSS_CORPUS } from './testing.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
// CI installs Chromium and sets this, so a missing browser fails there instead of skipping.
if (!haveChromium && process.env.SWITCHBOARD_REQUIRE_CHROMIUM === '1')
  throw new Error(`${CHROMIUM} is required (SWITCHBOARD_REQUIRE_CHROMIUM=1): apt-get install chromium`);
if (!haveChromium)
  process.stderr.write(
    `skipping the console browser tests: ${CHROMIUM} is missing (apt-get install chromium)\n`,
  );

/** Where the run leaves its screenshots (docs/console.md shows some of them). */
export const SCREENSHOTS =
  process.env.SWITCHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'switchboard-console-screenshots');
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A command approval: the gate holds Bash `deploy` for a person. */
const RULES = [
  {
    id: 'prod-deploy',
    when: 'tool == "Bash" && input.command.contains("deploy")',
    decision: 'require_approval',
    reason_code: 'PROD_DEPLOY',
  },
  {
    id: 'no-force-push',
    when: 'tool == "Bash" && input.command.contains("push --force")',
    decision: 'deny',
    reason_code: 'FORCE_PUSH',
  },
];

function hookBody(command: string, session = 'sess-browser-1'): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: '/tmp/t.jsonl',
    cwd: '/tmp',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: `toolu_${Math.random().toString(36).slice(2)}`,
  });
}

async function until<T>(fn: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!haveChromium)('the console in headless Chromium', () => {
  let h: ConsoleHarness;
  let server: ServerType;
  let base: string;
  let browser: Browser;
  let rx: ScriptedReceiver;
  let failing = true;

  beforeAll(async () => {
    rx = await startScriptedReceiver({ secret: SECRET });
    // `flaky` answers 404 (dead at once) until a test fixes it; `hook` always takes the message.
    rx.script = (hit) => ({ kind: 'answer', status: hit.url.startsWith('/flaky') && failing ? 404 : 204 });
    h = await consoleHarness('sqlite', {
      replace: [
        deliveryModule({ env: { HOOK_SECRET: SECRET }, egress: { dial: loopbackOnly }, config: { ...FAST } }),
      ],
      config: {
        rules: RULES,
        hooks: { approval_wait_seconds: 20 },
        egress: { allow: ['127.0.0.1'] },
        channels: {
          hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' },
          flaky: { type: 'webhook', url: `${rx.url}/flaky`, secret_env: 'HOOK_SECRET' },
        },
        routes: [{ match: 'true', channels: ['hook', 'flaky'] }],
        tools: TOOLS,
      },
    });
    h.t.services.relay.start();
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: h.t.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { chromium } = await import('playwright-core');
    // Playwright gives each launch a fresh temporary profile (its own user data dir) and removes it on
    // close; each test signs in in a new context of its own, so no cookie crosses tests.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await h?.cleanup();
    await rx?.close();
  });

  /** A fresh browser context signed in with `key` through the form, as a person would. */
  async function signedIn(key: string, width = 1280): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({ viewport: { width, height: width < 800 ? 844 : 900 } });
    const page = await ctx.newPage();
    await page.goto(`${base}/console/`);
    await page.fill('#key', key);
    await Promise.all([page.waitForURL(`${base}/console/`), page.click('button[type=submit]')]);
    return { ctx, page };
  }

  async function api(path: string, body: unknown, key: keyof typeof KEYS = 'agent'): Promise<Response> {
    return fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  it('refuses an agent key at the sign-in form', async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${base}/console/`);
    expect(page.url()).toMatch(/\/console\/login/);
    await page.fill('#key', KEYS.agent);
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Agent keys cannot sign in');
    expect((await ctx.cookies()).find((c) => c.name === 'sb_console')).toBeUndefined();
    await ctx.close();
  }, 30_000);

  it('shows an approval created through the API within 2 s, without a reload, and counts it in the title', async () => {
    const { ctx, page } = await signedIn(KEYS.approver);
    await page.waitForFunction("document.title.startsWith('Approvals')");
    // The stream is open once the hub has a client: from then on an event reaches this page.
    await until(async () => h.liveClients() > 0);
    let reloaded = false;
    page.on('framenavigated', () => {
      reloaded = true;
    });
    const res = await api('/v1/approvals', { action: 'rotate the signing key', reason: 'quarterly' });
    const { id } = (await res.json()) as { id: string };
    const started = Date.now();
    await page.waitForSelector(`[data-key="${id}"]`, { timeout: 2000 });
    const took = Date.now() - started;
    expect(took).toBeLessThan(2000);
    expect(reloaded).toBe(false);
    await page.waitForFunction('/^\\(\\d+\\) Approvals/.test(document.title)');
    await ctx.close();
  }, 30_000);

  it('approves with a comment and the held hook answers allow', async () => {
    const { ctx, page } = await signedIn(KEYS.approver);
    const held = fetch(`${base}/v1/runtimes/claude-code/hooks`, {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: hookBody('./deploy.sh production'),
    });
    const card = page.locator('article.approval', { hasText: 'deploy.sh production' });
    await card.waitFor({ timeout: 5000 });
    await card.locator('textarea').fill('ship it; watch the dashboards');
    await card.locator('button[value=approve]').click();
    const answer = (await (await held).json()) as { hookSpecificOutput?: { permissionDecision?: string } };
    expect(answer.hookSpecificOutput?.permissionDecision).toBe('allow');
    await card.locator('text=Approved.').waitFor();
    await page.waitForSelector('#decided >> text=ship it; watch the dashboards', { timeout: 5000 });
    await ctx.close();
  }, 30_000);

  it('refuses a POST without the CSRF token from the signed-in page itself', async () => {
    const { ctx, page } = await signedIn(KEYS.admin);
    const res = await api('/v1/approvals', { action: 'csrf probe', reason: 'r' });
    const { id } = (await res.json()) as { id: string };
    const status = await page.evaluate(async (path) => {
      const r = await fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'decision=approve',
      });
      return r.status;
    }, `/console/approvals/${id}/decision`);
    expect(status).toBe(403);
    const view = await fetch(`${base}/v1/approvals/${id}`, { headers: auth('approver') });
    expect(((await view.json()) as { status: string }).status).toBe('pending');
    await api(`/v1/approvals/${id}/decision`, { decision: 'reject', comment: 'probe done' }, 'approver');
    await ctx.close();
  }, 30_000);

  it('keeps the XSS corpus inert: no script runs, no CSP violation, the text shows as written', async () => {
    const { ctx, page } = await signedIn(KEYS.admin);
    const violations: string[] = [];
    const dialogs: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const ids: string[] = [];
    for (const text of XSS_CORPUS) {
      const res = await api('/v1/approvals', {
        action: text,
        reason: text,
        payload_json: JSON.stringify({ text }),
      });
      ids.push(((await res.json()) as { id: string }).id);
    }
    await api(`/v1/approvals/${ids[0]}/decision`, { decision: 'reject', comment: XSS_CORPUS[1] }, 'approver');
    await page.goto(`${base}/console/`);
    await page.waitForSelector(`[data-key="${ids[1]}"]`);
    await page.waitForTimeout(500);
    expect(await page.evaluate('typeof window.__xss')).toBe('undefined');
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
    expect(await page.locator(`[data-key="${ids[1]}"] h2`).textContent()).toBe(XSS_CORPUS[1]);
    for (const id of ids.slice(1))
      await api(`/v1/approvals/${id}/decision`, { decision: 'reject' }, 'approver');
    await ctx.close();
  }, 30_000);

  it('draws a task timeline with hook → decision → approval → notification in order, and cancels the task', async () => {
    const tasks = h.t.port(tasksPort);
    const cause = await h.t.services.emit({ type: 'integration.webhook.admitted' });
    const task = await tasks.launch({
      trigger_id: 'browser-test',
      action: { type: 'command', command: ['sleep', '60'] },
      trusted: {},
      untrusted: { ref: 'vault://none', digest: 'sha256:0', text: 'review this' },
      owner: 'me',
      title: 'Review acme/widgets#7',
      cause,
    });
    const secret = 'task-bound-agent-key-0123456789';
    h.t.services.keys.add(secret, { name: 'task-bot', role: 'agent', task_id: task.id });
    const held = fetch(`${base}/v1/runtimes/claude-code/hooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: hookBody('./deploy.sh staging', 'sess-task-7'),
    });
    const approval = await until(async () => {
      const [e] = await h.t.services.log.list({
        taskId: task.id,
        type: 'agent.approval.requested',
        limit: 1,
      });
      return e?.envelope.redacted_summary['approval_id'] as string | undefined;
    });
    await api(`/v1/approvals/${approval}/decision`, { decision: 'approve' }, 'approver');
    await held;
    await until(async () => {
      const [n] = await h.t.services.log.list({ taskId: task.id, type: 'agent.notification.sent', limit: 1 });
      if (!n) return false;
      const [d] = await h.t.services.log.list({
        correlationId: n.envelope.event_id,
        type: 'integration.delivery.succeeded',
        limit: 1,
      });
      return d !== undefined;
    });
    const { ctx, page } = await signedIn(KEYS.admin);
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${base}/console/tasks/${task.id}`);
    const types = await page
      .locator('ol.timeline li')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-type')));
    // Each step after the one before it. The decision (`deferred`) and the approval are both answers
    // to the hook's request; the gate commits the approval first, so the log has it first.
    const at = (t: string, from = 0) => types.indexOf(t, from);
    const hook = at('agent.tool.requested');
    expect(hook).toBeGreaterThan(at('agent.task.started'));
    const decided = at('agent.tool.deferred', hook);
    const asked = at('agent.approval.requested', hook);
    expect(decided).toBeGreaterThan(hook);
    expect(asked).toBeGreaterThan(hook);
    const told = at('agent.notification.sent', Math.max(decided, asked));
    expect(told).toBeGreaterThan(Math.max(decided, asked));
    expect(at('integration.delivery.succeeded', told)).toBeGreaterThan(told);
    expect(at('agent.approval.approved', asked)).toBeGreaterThan(asked);
    // Causation as indentation: the decision sits under the request it answers.
    const depthOf = async (t: string) =>
      page
        .locator(`ol.timeline li[data-type="${t}"]`)
        .first()
        .evaluate((el) => el.className);
    expect(await depthOf('agent.tool.requested')).toMatch(/\bd0\b/);
    expect(await depthOf('agent.tool.deferred')).toMatch(/\bd1\b/);
    await page.click('a:text("Full")');
    await page.waitForSelector('ol.timeline.full pre.json');
    await Promise.all([page.waitForURL(/done=canceled/), page.click('button:text("Cancel task")')]);
    expect((await tasks.get(task.id))?.state).toBe('canceled');
    await page.waitForSelector('text=The task was canceled.');
    await ctx.close();
  }, 60_000);

  it('replays a dead letter from the DLQ page and the local receiver gets it', async () => {
    const dead = await until(async () => {
      const rows = await h.t.services.log.list({ type: 'integration.delivery.dead', limit: 1 });
      return rows[0];
    });
    const id = dead.envelope.subject.resource_ref as string;
    failing = false;
    const before = rx.hits.filter((x) => x.url.startsWith('/flaky')).length;
    const { ctx, page } = await signedIn(KEYS.admin);
    await page.goto(`${base}/console/deliveries`);
    const group = page.locator('#dlq-h + .scroll tr', { hasText: 'flaky' });
    await group.waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'dlq-1280.png') });
    await Promise.all([page.waitForURL(/done=replayed/), group.locator('button').click()]);
    await until(async () => rx.hits.filter((x) => x.url.startsWith('/flaky')).length > before);
    await page.goto(`${base}/console/deliveries/${id}`);
    await until(async () => {
      await page.reload();
      return (await page.locator('dl.facts').textContent())?.includes('succeeded');
    });
    await ctx.close();
  }, 60_000);

  it('draws the metrics at a glance with uPlot under the strict CSP, the figures as text beside them', async () => {
    await h.sampleGlance();
    for (const command of ['ls', 'git push --force origin main'])
      await api('/v1/gate/evaluate', { tool: 'Bash', input: { command } });
    await h.sampleGlance();
    const { ctx, page } = await signedIn(KEYS.admin);
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|error/i.test(m.text())) violations.push(m.text());
    });
    page.on('pageerror', (e) => violations.push(e.message));
    await page.goto(`${base}/console/metrics`);
    await page.waitForSelector('[data-chart="webhooks"] canvas');
    expect(await page.locator('[data-chart] canvas').count()).toBe(6);
    // Each chart is as wide as its box: nothing sticks out of a card.
    const overflow = await page
      .locator('[data-chart]')
      .evaluateAll((els) => els.filter((el) => el.scrollWidth > el.clientWidth + 1).length);
    expect(overflow).toBe(0);
    const figures = await page.locator('figure.chart').allTextContents();
    expect(figures.find((f) => f.includes('Gate decisions'))).toMatch(/denied: [0-9.]+\/s/);
    expect(figures.find((f) => f.includes('Approvals pending'))).toMatch(/pending: \d+/);
    expect(violations).toEqual([]);
    await ctx.close();
  }, 30_000);

  it('shows the tools registry and every caller’s recent touches', async () => {
    const touch = (tool: string, id: string) =>
      api('/v1/touch', { tool_name: tool, params: { n: 1 }, request_id: id });
    expect((await touch('ops.uptime', 'browser-up-1')).status).toBe(200);
    await touch('ops.missing', 'browser-missing-1');
    const { ctx, page } = await signedIn(KEYS.admin);
    await page.click('nav >> text=Tools');
    await page.waitForURL(`${base}/console/tools`);
    const registry = page.locator('#reg-h + .scroll tbody tr');
    expect(await registry.filter({ hasText: 'ops.uptime' }).count()).toBe(1);
    expect(await page.locator('#reg-h + .scroll').textContent()).toContain(XSS_CORPUS[0]);
    expect(await page.evaluate('typeof window.__xss')).toBe('undefined');
    const touches = page.locator('#touch-h ~ .scroll tbody tr');
    await touches.first().waitFor({ timeout: 5000 });
    expect(await touches.filter({ hasText: 'browser-missing' }).textContent()).toContain('TOOL_FAILED');
    // Keyboard: pick the tool in the labelled select, Tab to the button, Enter.
    await page.selectOption('#f-tool', 'ops.uptime');
    await page.focus('#f-tool');
    await page.keyboard.press('Tab');
    await Promise.all([page.waitForURL(/tool=ops.uptime/, { timeout: 5000 }), page.keyboard.press('Enter')]);
    expect(await touches.filter({ hasText: 'browser-missing' }).count()).toBe(0);
    expect(await touches.filter({ hasText: 'browser-up' }).count()).toBe(1);
    await ctx.close();
  }, 30_000);

  it('runs a draft policy in the shadow of the recorded intents and shows what would change', async () => {
    await api('/v1/gate/evaluate', { tool: 'Bash', input: { command: './deploy.sh canary' } });
    const { ctx, page } = await signedIn(KEYS.admin);
    await page.goto(`${base}/console/policy`);
    await Promise.all([
      page.waitForURL(/\/policy\/shadow$/),
      page.click('text=run it over the recorded intents'),
    ]);
    const draft = [
      'rules:',
      '  - id: no-deploys-this-week',
      '    when: tool == "Bash" && input.command.contains("deploy")',
      '    decision: deny',
      '    reason_code: FREEZE',
    ].join('\n');
    await page.fill('#sh-yaml', draft);
    await page.fill('#sh-since', '1d');
    await Promise.all([page.waitForLoadState('load'), page.click('text=Run the draft over the log')]);
    await page.waitForSelector('#shadow-h');
    expect(await page.locator('#shadow-h').textContent()).toMatch(
      /^[1-9]\d* of \d+ recorded intents would be decided differently$/,
    );
    expect(await page.locator('main').textContent()).toContain('require_approval→deny');
    expect(await page.locator('#sh-yaml').inputValue()).toBe(draft);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width < 800 ? 844 : 900 });
      const wide = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect({ width, wide }).toEqual({ width, wide: 0 });
      await page.screenshot({ path: join(SCREENSHOTS, `shadow-result-${width}.png`), fullPage: true });
    }
    await ctx.close();
  }, 30_000);

  it('switches away mode from the sessions page with the keyboard, and back', async () => {
    const { ctx, page } = await signedIn(KEYS.approver, 390);
    await page.goto(`${base}/console/sessions`);
    const on = page.locator('#away-h ~ .scroll button', { hasText: 'Turn on' }).first();
    await on.focus();
    await Promise.all([page.waitForURL(/done=away_on/), page.keyboard.press('Enter')]);
    await page.waitForSelector('text=Away mode is on');
    await page.screenshot({ path: join(SCREENSHOTS, 'sessions-away-390.png'), fullPage: true });
    const view = await fetch(`${base}/v1/away`, { headers: auth('approver') });
    expect(await view.json()).toMatchObject({ away: true, changed_by: 'me' });
    const off = page.locator('#away-h ~ .scroll button', { hasText: 'Turn off' }).first();
    await Promise.all([page.waitForURL(/done=away_off/), off.click()]);
    await ctx.close();
  }, 30_000);

  it('takes screenshots of every page at 1280 and 390 px, none wider than a 360 px phone', async () => {
    const taskId = (await h.t.port(tasksPort).list!({ limit: 1 }))[0]!.id;
    const [someEvent] = await h.t.services.log.list({ type: 'agent.approval.requested', limit: 1 });
    const [dlv] = await h.t.services.log.list({ type: 'integration.delivery.succeeded', limit: 1 });
    await api('/v1/approvals', {
      action: 'Bash: terraform apply -target=module.db',
      reason: 'PROD_DEPLOY',
      payload_json: JSON.stringify({ command: 'terraform apply -target=module.db', cwd: '/srv/infra' }),
    });
    const pages: [string, string][] = [
      ['approvals', '/console/'],
      ['tasks', '/console/tasks'],
      ['task', `/console/tasks/${taskId}`],
      ['sessions', '/console/sessions'],
      ['events', '/console/events'],
      ['event', `/console/events/${someEvent!.envelope.event_id}`],
      ['verify', '/console/events/verify'],
      ['deliveries', '/console/deliveries'],
      ['delivery', `/console/deliveries/${dlv!.envelope.subject.resource_ref}`],
      ['policy', '/console/policy'],
      ['shadow', '/console/policy/shadow'],
      ['tools', '/console/tools'],
      ['metrics', '/console/metrics'],
    ];
    for (const width of [1280, 390, 360]) {
      const { ctx, page } = await signedIn(KEYS.admin, width);
      for (const [name, path] of pages) {
        await page.goto(`${base}${path}`);
        if (name === 'metrics') await page.waitForSelector('[data-chart="webhooks"] canvas');
        const wide = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        expect({ name, width, wide }).toEqual({ name, width, wide: 0 });
        if (width < 800) {
          // On a phone a table row is a card: no cell's text may stick out of it either.
          const clipped = await page.locator('main td > .cell').evaluateAll(
            (cells) =>
              cells.filter((el) => {
                const row = el.closest('tr')!.getBoundingClientRect();
                return (
                  el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > row.right + 1
                );
              }).length,
          );
          expect({ name, width, clipped }).toEqual({ name, width, clipped: 0 });
        }
        if (width === 360) continue;
        // What the screen shows first, and the whole page.
        await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`) });
        await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}-full.png`), fullPage: true });
      }
      if (width !== 360) {
        await page.goto(`${base}/console/policy`);
        await page.fill('#s-tool', 'Bash');
        await page.fill('#s-input', '{"command": "git push --force origin main"}');
        await Promise.all([page.waitForLoadState('load'), page.click('form.simulate button[type=submit]')]);
        await page.waitForSelector('#result-h');
        expect(await page.locator('#result-h').textContent()).toContain('deny');
        await page.screenshot({ path: join(SCREENSHOTS, `simulator-${width}.png`), fullPage: true });
        await page.goto(`${base}/console/login`);
      }
      await ctx.close();
    }
    // Dark mode follows the system setting.
    const dark = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' });
    const darkPage = await dark.newPage();
    await darkPage.goto(`${base}/console/`);
    await darkPage.fill('#key', KEYS.admin);
    await Promise.all([darkPage.waitForURL(`${base}/console/`), darkPage.click('button[type=submit]')]);
    const background = await darkPage.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(15, 18, 22)');
    await darkPage.screenshot({ path: join(SCREENSHOTS, 'approvals-dark-1280.png') });
    // The charts take their colours from the style sheet's dark variables.
    await darkPage.goto(`${base}/console/metrics`);
    await darkPage.waitForSelector('[data-chart="webhooks"] canvas');
    await darkPage.screenshot({ path: join(SCREENSHOTS, 'metrics-dark-1280.png') });
    await dark.close();
    for (const width of [390, 1280]) {
      const login = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
      await login.goto(`${base}/console/login`);
      await login.screenshot({ path: join(SCREENSHOTS, `login-${width}.png`) });
      await login.context().close();
    }
  }, 120_000);

  it('reports a tampered row when the chain is verified', async () => {
    const { ctx, page } = await signedIn(KEYS.admin);
    await page.goto(`${base}/console/events/verify`);
    await page.waitForSelector('text=The chain is intact');
    const [victim] = await h.t.services.log.list({ type: 'agent.approval.requested', limit: 1 });
    await h.t.services.db.query({
      text: `UPDATE events SET body = replace(body, 'quarterly', 'QUARTERLY') WHERE seq = $1`,
      values: [victim!.seq],
    });
    await page.reload();
    await page.waitForSelector(`text=The chain is broken at event #${victim!.seq}`);
    expect(await page.locator('dl.facts').textContent()).toContain('hash_mismatch');
    await page.screenshot({ path: join(SCREENSHOTS, 'verify-broken-1280.png'), fullPage: true });
    await ctx.close();
  }, 30_000);
});
