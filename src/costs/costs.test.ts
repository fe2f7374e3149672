import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gateModule } from '../gate/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { coreModule } from '../server/core-routes.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { costsModule } from './module.js';
import type { CostReport } from './report.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);
const hookFixture = (runtime: string, name: string, patch: Record<string, unknown> = {}) =>
  JSON.stringify({
    ...JSON.parse(
      readFileSync(new URL(`../runtimes/${runtime}/fixtures/${name}.json`, import.meta.url), 'utf8'),
    ),
    ...patch,
  });

const PRICES = {
  'claude-sonnet-4-5': {
    input_per_mtok: 3,
    output_per_mtok: 15,
    cache_read_per_mtok: 0.3,
    cache_write_per_mtok: 3.75,
  },
  'gpt-5.1-codex': { input_per_mtok: 1.25, output_per_mtok: 10, cache_read_per_mtok: 0.125 },
};

const OVER_BUDGET = {
  id: 'stop-when-day-burned',
  when: 'has(budgets.tokens_left_today) && budgets.tokens_left_today <= 0',
  decision: 'deny',
  reason_code: 'DAILY_TOKEN_BUDGET_SPENT',
};

describe.each(await dialects())('cost ledger on %s', (dialect) => {
  let t: TestApp | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function start(costs: Record<string, unknown> = {}, rules: unknown[] = []) {
    dir = mkdtempSync(join(tmpdir(), 'sb-costs-'));
    mkdirSync(join(dir, 'projects', 'my-project'), { recursive: true });
    t = await testApp({
      dialect,
      modules: [coreModule(), costsModule(), gateModule({ watch: false, sighup: false }), runtimesModule()],
      config: { costs: { prices: PRICES, transcripts: { roots: [join(dir, 'projects')] }, ...costs }, rules },
    });
    return join(dir, 'projects', 'my-project', 'session.jsonl');
  }

  async function hook(runtime: string, body: string) {
    const res = await t!.app.request(`/v1/runtimes/${runtime}/hooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body,
    });
    expect(res.status).toBe(200);
    await t!.services.relay.drain();
    return (await res.json()) as Record<string, unknown>;
  }

  async function costs(query: string, role: 'admin' | 'agent' | 'approver' = 'admin') {
    const res = await t!.app.request(`/v1/costs${query}`, { headers: auth(role) });
    return { status: res.status, body: (await res.json()) as CostReport & { error: { message: string } } };
  }

  it('counts turns, tool calls and the transcript tokens of a Claude Code session, priced', async () => {
    const transcript = await start();
    copyFileSync(fixture('claude-code-turn1.jsonl'), transcript);
    const pre = hookFixture('claude-code', 'PreToolUse', { transcript_path: transcript });
    await hook('claude-code', pre);
    await hook(
      'claude-code',
      hookFixture('claude-code', 'PreToolUse', { tool_use_id: 'toolu_2', transcript_path: transcript }),
    );
    await hook('claude-code', hookFixture('claude-code', 'Stop', { transcript_path: transcript }));

    const { status, body } = await costs('?by=session');
    expect(status).toBe(200);
    expect(body).toMatchObject({ by: 'session', currency: 'USD' });
    expect(body.rows).toHaveLength(1);
    const row = body.rows[0]!;
    expect(row).toMatchObject({
      key: 'abc123',
      turns: 1,
      tool_calls: 2,
      tokens: {
        input: 13,
        output: 370,
        cache_read: 39950,
        cache_write: 2570,
        total: 13 + 370 + 39950 + 2570,
      },
      unpriced_tokens: 0,
    });
    // 13×3 + 370×15 + 39,950×0.3 + 2,570×3.75 = 27,211.5 millionths, rounded once per model and turn.
    expect(row.cost).toBe(0.027212);

    // The next turn reads only what was appended; a model without a price is counted as unpriced.
    appendFileSync(transcript, readFileSync(fixture('claude-code-turn2.jsonl')));
    await hook('claude-code', hookFixture('claude-code', 'Stop', { transcript_path: transcript }));
    const after = (await costs('?by=agent')).body.rows[0]!;
    expect(after).toMatchObject({ key: 'bot', turns: 2, tool_calls: 2 });
    expect(after.tokens.input).toBe(13 + 5 + 2);
    expect(after.unpriced_tokens).toBe(2 + 18 + 14600 + 80);
    // A Stop with nothing new counts the turn, and no token twice.
    await hook('claude-code', hookFixture('claude-code', 'Stop', { transcript_path: transcript }));
    const third = (await costs('?by=day&since=1d')).body.rows[0]!;
    expect(third).toMatchObject({ turns: 3, tokens: { input: 20 } });
  });

  it("reads a Codex rollout's running token total at Stop", async () => {
    const transcript = await start();
    copyFileSync(fixture('codex-rollout.jsonl'), transcript);
    await hook('codex', hookFixture('codex', 'Stop', { transcript_path: transcript }));
    const row = (await costs('?by=session')).body.rows[0]!;
    expect(row).toMatchObject({
      key: '019a6c2e-7d1f-7b20-9a43-5f0e8c1d2b3a',
      turns: 1,
      tokens: { input: 19000 - 12288, cache_read: 12288, output: 260 },
    });
    expect(row.cost).toBeCloseTo(((19000 - 12288) * 1.25 + 260 * 10 + 12288 * 0.125) / 1e6, 6);
  });

  it('never opens a transcript outside the configured folders', async () => {
    await start();
    const outside = join(dir!, 'elsewhere.jsonl');
    copyFileSync(fixture('claude-code-turn1.jsonl'), outside);
    await hook('claude-code', hookFixture('claude-code', 'Stop', { transcript_path: outside }));
    await hook('claude-code', hookFixture('claude-code', 'Stop', { transcript_path: '/etc/passwd' }));
    const row = (await costs('?by=session')).body.rows[0]!;
    expect(row).toMatchObject({ turns: 2, tokens: { total: 0 } });
  });

  it('denies the next tool call of an agent whose daily token budget a turn used up', async () => {
    const transcript = await start({ budgets: { agents: { bot: { tokens_per_day: 40_000 } } } }, [
      OVER_BUDGET,
    ]);
    copyFileSync(fixture('claude-code-turn1.jsonl'), transcript);
    const pre = hookFixture('claude-code', 'PreToolUse', { transcript_path: transcript });
    const before = await hook('claude-code', pre);
    expect(JSON.stringify(before)).not.toContain('deny');
    await hook('claude-code', hookFixture('claude-code', 'Stop', { transcript_path: transcript }));
    const after = await hook('claude-code', pre);
    expect(after).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(JSON.stringify(after)).toContain('DAILY_TOKEN_BUDGET_SPENT');
    // The tenant's budget and a money budget read the same ledger.
    const sim = await t!.app.request('/v1/gate/evaluate', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: JSON.stringify({ tool: 'Bash', input: { command: 'ls' }, session_id: 'abc123' }),
    });
    expect(((await sim.json()) as { decision: string }).decision).toBe('deny');
  });

  it('gives money budgets and the tenant budget as facts, the smaller allowance winning', async () => {
    const transcript = await start({
      budgets: {
        tenant: { tokens_per_day: 1_000_000, cost_per_day: 0.02 },
        default_agent: { cost_per_day: 5 },
      },
    });
    copyFileSync(fixture('claude-code-turn1.jsonl'), transcript);
    await hook('claude-code', hookFixture('claude-code', 'Stop', { transcript_path: transcript }));
    const { BudgetBook } = await import('./budgets.js');
    const book = new BudgetBook(t!.services.db, () => t!.config.costs);
    const facts = await book.facts(
      { tenant_id: t!.config.tenant.id, agent_id: 'bot', task_id: null, session_id: null },
      t!.services.now(),
    );
    const spent = 0.027212;
    expect(facts['tokens_left_today']).toBe(1_000_000 - 42903);
    expect(facts['cost_left_today']).toBeCloseTo(0.02 - spent, 6);
    expect(facts['cost_today']).toBeCloseTo(spent, 6);
  });

  it('answers a bad query with the field to fix, and only to an admin', async () => {
    await start();
    expect((await costs('?by=model')).status).toBe(400);
    expect((await costs('?since=lastweek')).body.error.message).toMatch(/since/);
    expect((await costs('?limit=0')).status).toBe(400);
    expect((await costs('?color=red')).status).toBe(400);
    expect((await costs('', 'agent')).status).toBe(403);
    expect((await costs('', 'approver')).status).toBe(403);
    expect((await costs('')).body.rows).toEqual([]);
  });
});

describe('switchboard costs', () => {
  it('prints the ledger as a table with a total, and the JSON with --json', async () => {
    const { testGateway, KEYS } = await import('../server/testing.js');
    const { costs } = await import('../cli/costs.js');
    const dir = mkdtempSync(join(tmpdir(), 'sb-costs-cli-'));
    const gw = await testGateway({
      dialect: 'sqlite',
      config: {
        auth: {
          keys: [
            { name: 'ops', role: 'admin', key: KEYS.admin },
            { name: 'bot', role: 'agent', key: KEYS.agent },
          ],
        },
        costs: { prices: PRICES, transcripts: { roots: [dir] } },
      },
      modules: [coreModule(), costsModule(), gateModule({ watch: false, sighup: false }), runtimesModule()],
    });
    try {
      const transcript = join(dir, 'session.jsonl');
      copyFileSync(fixture('claude-code-turn1.jsonl'), transcript);
      const res = await fetch(`${gw.gateway.url}/v1/runtimes/claude-code/hooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.agent}` },
        body: hookFixture('claude-code', 'Stop', { transcript_path: transcript }),
      });
      expect(res.status).toBe(200);
      await gw.gateway.services.relay.drain();
      const lines: string[] = [];
      const env = { SWITCHBOARD_URL: gw.gateway.url, SWITCHBOARD_KEY: KEYS.admin };
      await costs({ env, out: (l) => lines.push(l) });
      expect(lines[1]).toMatch(/^agent\s+turns\s+tools\s+wall\s+tokens\s+cost \(USD\)$/);
      expect(lines[2]).toMatch(/^bot\s+1\s+0\s+0s\s+42,903\s+0\.0272$/);
      expect(lines[3]).toMatch(/^total\s+1/);
      const json: string[] = [];
      await costs({ env, by: 'session', json: true, out: (l) => json.push(l) });
      expect(JSON.parse(json.join('\n')).rows[0].key).toBe('abc123');
      await expect(costs({ env: { ...env, SWITCHBOARD_KEY: KEYS.agent }, out: () => {} })).rejects.toThrow(
        /admin key/,
      );
    } finally {
      await gw.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
