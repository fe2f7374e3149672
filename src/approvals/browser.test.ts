import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalsHarness, approvalsHarness } from './testing.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
// CI installs Chromium and sets this, so a missing browser fails there instead of skipping.
if (!haveChromium && process.env.SWITCHBOARD_REQUIRE_CHROMIUM === '1')
  throw new Error(`${CHROMIUM} is required (SWITCHBOARD_REQUIRE_CHROMIUM=1): apt-get install chromium`);
if (!haveChromium)
  process.stderr.write(
    `skipping the approval page browser test: ${CHROMIUM} is missing (apt-get install chromium)\n`,
  );

/** The phone page in a real browser: the CSP must not break the form, and one click must decide. */
describe.skipIf(!haveChromium)('the approval page in headless Chromium', () => {
  let h: ApprovalsHarness;
  let server: ServerType;
  let base: string;
  beforeAll(async () => {
    h = await approvalsHarness('sqlite', { realClock: true });
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: h.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.cleanup();
  });

  it('opens the link, shows what is asked, and approves with one click on Approve', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    try {
      const res = await h.ask({ action: 'deploy <prod>', reason: 'release', payload_json: '{"ref":"v2"}' });
      const { id } = (await res.json()) as { id: string };
      const { pageUrl } = await h.approvals.approvalLinks(id, base);
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(pageUrl);
      expect(await page.textContent('h1')).toBe('Approval requested');
      expect(await page.textContent('body')).toContain('deploy <prod>');
      expect((await h.approvals.get(id))?.state).toBe('pending');
      await Promise.all([
        page.waitForLoadState('load'),
        page.waitForURL(pageUrl),
        page.click('button[value="approve"]'),
      ]);
      await page.waitForSelector('text=Approved');
      expect((await h.approvals.get(id))?.state).toBe('approved');
      expect(violations).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('fits a phone at 360–412 px, keeps the reason’s line breaks, shows local expiry, and rejects with a comment', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    try {
      const reason = `Release 1.2 to production\nchecklist: done\nrollback: ${'x'.repeat(120)}`;
      const res = await h.ask({
        action: `deploy ${'service-with-a-very-long-unbroken-name-'.repeat(4)}`,
        reason,
        payload_json: JSON.stringify({ ref: 'v2', note: 'y'.repeat(300) }),
      });
      const { id } = (await res.json()) as { id: string };
      const { pageUrl } = await h.approvals.approvalLinks(id, base);
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        timezoneId: 'Asia/Tokyo',
        locale: 'en-US',
        deviceScaleFactor: 2,
      });
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(pageUrl);
      for (const width of [360, 390, 412]) {
        await page.setViewportSize({ width, height: 844 });
        const scroll = await page.locator('html').evaluate((el) => el.scrollWidth);
        expect(scroll, `${width} px`).toBeLessThanOrEqual(width);
      }
      await page.setViewportSize({ width: 390, height: 844 });
      const shot = join(mkdtempSync(join(tmpdir(), 'sb-approval-page-')), 'approval-390.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      process.stderr.write(`approval page at 390 px: ${shot}\n`);
      // The reason's line breaks are kept as line breaks on screen.
      const shownReason = await page.locator('dd').nth(1).innerText();
      expect(shownReason.split('\n').slice(0, 2)).toEqual(['Release 1.2 to production', 'checklist: done']);
      // Expiry in the viewer's zone (Tokyo: the script replaced the UTC fallback) and as minutes left.
      const until = await page.locator('[data-until]').innerText();
      expect(until).toMatch(/^in (1[45]|1[0-9]) min$/);
      const local = await page.locator('time[data-local]').innerText();
      expect(local).not.toContain('UTC');
      const expected = new Date((await h.approvals.get(id))!.expires_at).toLocaleString('en-US', {
        timeZone: 'Asia/Tokyo',
        hour: 'numeric',
        minute: '2-digit',
      });
      expect(local).toContain(expected);
      // A comment goes with the reject, and the agent gets it.
      await page.fill('textarea[name="comment"]', 'not on a Friday');
      await Promise.all([page.waitForURL(pageUrl), page.click('button[value="reject"]')]);
      await page.waitForSelector('text=Rejected');
      expect(await h.approvals.get(id)).toMatchObject({ state: 'rejected', comment: 'not on a Friday' });
      expect(violations).toEqual([]);
      await context.close();
    } finally {
      await browser.close();
    }
  }, 60_000);
});
