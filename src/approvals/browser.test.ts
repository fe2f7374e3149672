import { existsSync } from 'node:fs';
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
});
