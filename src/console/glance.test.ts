import { afterEach, describe, expect, it } from 'vitest';
import { approvalsPort } from '../approvals/port.js';
import { auth } from '../server/testing.js';
import { Glance, medianSeconds } from './glance.js';
import { type ConsoleHarness, consoleHarness, page } from './testing.js';

const RULES = [
  { id: 'no-rm', when: 'input.command.contains("rm -rf")', decision: 'deny', reason_code: 'RM' },
  { id: 'deploys', when: 'input.command.contains("deploy")', decision: 'require_approval', reason_code: 'D' },
];

describe('medianSeconds', () => {
  it('is the middle span of the decided ones, or the mean of the two middle ones', () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const a = (from: number, to: number | null) => ({
      created_at: at(from),
      decided_at: to === null ? null : at(to),
    });
    expect(medianSeconds([])).toBeNull();
    expect(medianSeconds([a(0, null)])).toBeNull();
    expect(medianSeconds([a(0, 10), a(0, 30), a(0, 20)])).toBe(20);
    expect(medianSeconds([a(0, 10), a(0, 40), a(0, 20), a(5, 35)])).toBe(25);
  });
});

describe('metrics at a glance', () => {
  let h: ConsoleHarness;
  afterEach(() => h?.cleanup());

  it('reads decisions, approvals, deliveries and webhooks from the registry and the approvals port', async () => {
    let clock = Date.parse('2026-03-01T10:00:00Z');
    h = await consoleHarness('sqlite', { config: { rules: RULES }, now: () => clock });
    const glance = new Glance({
      registry: h.t.services.metrics.registry,
      approvals: () => h.t.port(approvalsPort),
      now: () => clock,
    });
    const evaluate = (command: string) =>
      h.t.app.request('/v1/gate/evaluate', {
        method: 'POST',
        headers: { ...auth('agent'), 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'Bash', input: { command } }),
      });
    const asked = await h.t.app.request('/v1/approvals', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'rotate', reason: 'r' }),
    });
    const { id } = (await asked.json()) as { id: string };
    clock += 30_000;
    // Deciding runs the gate's re-check (itself a decision): before the first sample, so not counted.
    await h.t.port(approvalsPort).decide(id, 'approve', { name: 'alice', role: 'approver' });
    await glance.sample();
    for (const c of ['ls', 'pwd', 'rm -rf /', './deploy.sh']) expect((await evaluate(c)).status).toBe(200);
    // Ingress appends these through the same emit, which counts them by type.
    for (const type of [
      'integration.webhook.accepted',
      'integration.webhook.rejected',
      'integration.webhook.rejected',
    ] as const)
      await h.t.services.emit({ type });
    clock += 10_000;
    await glance.sample();
    const s = glance.series();
    expect(s.t).toHaveLength(2);
    // The first point has no earlier reading, so no rate.
    expect([s.allowed[0], s.denied[0], s.held[0]]).toEqual([null, null, null]);
    // Over 10 s: two allowed, one denied, one held → 0.2, 0.1, 0.1 per second.
    expect([s.allowed[1], s.denied[1], s.held[1]]).toEqual([0.2, 0.1, 0.1]);
    // The deploy is still pending; the rotate took 30 s to decide.
    expect(s.pending[1]).toBe(1);
    expect(s.median_decision_s[1]).toBe(30);
    expect(s.dlq[1]).toBe(0);
    expect(s.failing_per_min[1]).toBe(0);
    expect([s.accepted_per_min[1], s.rejected_per_min[1]]).toEqual([6, 12]);
  });

  it('keeps the newest samples only', async () => {
    let clock = 1_000_000;
    h = await consoleHarness('sqlite', { now: () => clock });
    const glance = new Glance({
      registry: h.t.services.metrics.registry,
      approvals: () => undefined,
      now: () => clock,
      kept: 3,
    });
    for (let i = 0; i < 5; i++) {
      clock += 10_000;
      await glance.sample();
    }
    const s = glance.series();
    expect(s.t).toEqual([1030, 1040, 1050]);
    expect(s.pending).toEqual([null, null, null]);
  });

  it('serves the page to admins only, its figures as text, and the series as JSON', async () => {
    h = await consoleHarness('sqlite');
    const res = await page(h.t.app, '/console/metrics', h.admin);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('Gate decisions per second');
    expect(text).toContain('src="/console/assets/uPlot.iife.min.js"');
    expect((await page(h.t.app, '/console/metrics', h.approver)).status).toBe(403);
    const data = await h.t.app.request('/console/metrics/data', { headers: { cookie: h.admin.cookie } });
    expect(data.status).toBe(200);
    const body = (await data.json()) as { t: number[]; sample_seconds: number };
    expect(body.sample_seconds).toBe(10);
    expect(Array.isArray(body.t)).toBe(true);
  });
});
