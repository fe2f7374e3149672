import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { costMicros, priceOf } from './prices.js';
import { claudeCodeUsage, codexUsage } from './usage.js';
import { sinceDay } from './day.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const ZERO = { input: 0, cached: 0, output: 0 };

describe('transcript usage', () => {
  it('counts a Claude Code response written as several lines once, by its message id', () => {
    const { usage, lastId } = claudeCodeUsage(fixture('claude-code-turn1.jsonl'), null);
    expect(usage).toEqual([
      { model: 'claude-sonnet-4-5-20250929', input: 13, output: 370, cache_read: 39950, cache_write: 2570 },
    ]);
    expect(lastId).toBe('msg_01C');
  });

  it('splits a turn by model and skips Claude Code synthetic error replies', () => {
    const { usage } = claudeCodeUsage(fixture('claude-code-turn2.jsonl'), 'msg_01C');
    expect(usage).toEqual([
      { model: 'claude-sonnet-4-5-20250929', input: 5, output: 40, cache_read: 14500, cache_write: 0 },
      { model: 'claude-haiku-4-5-20251001', input: 2, output: 18, cache_read: 14600, cache_write: 80 },
    ]);
  });

  it('does not count the message an earlier read ended on again', () => {
    const text = fixture('claude-code-turn1.jsonl').split('\n').slice(0, 3).join('\n');
    expect(claudeCodeUsage(text, 'msg_01A').usage).toEqual([]);
  });

  it('ignores lines cut short or not JSON', () => {
    const text = `${fixture('claude-code-turn1.jsonl')}{"type":"assistant","message":{"id":"msg_x"`;
    expect(claudeCodeUsage(text, null).usage[0]?.output).toBe(370);
  });

  it("takes Codex's running total once, cached input apart, and a repeated count adds nothing", () => {
    const chunk = codexUsage(fixture('codex-rollout.jsonl'), ZERO, null, 'fallback');
    expect(chunk.usage).toEqual([
      { model: 'gpt-5.1-codex', input: 19000 - 12288, cache_read: 12288, cache_write: 0, output: 260 },
    ]);
    expect(chunk.totals).toEqual({ input: 19000, cached: 12288, output: 260 });
    const again = codexUsage(fixture('codex-rollout.jsonl'), chunk.totals!, chunk.model ?? null, null);
    expect(again.usage).toEqual([]);
  });

  it('prices by the longest key a model starts with, cache tokens at the input price unless named', () => {
    const prices = {
      'claude-sonnet': { input_per_mtok: 1, output_per_mtok: 1 },
      'claude-sonnet-4-5': { input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3 },
    };
    expect(priceOf(prices, 'claude-sonnet-4-5-20250929')?.input_per_mtok).toBe(3);
    expect(priceOf(prices, 'gpt-5')).toBeUndefined();
    const u = { model: 'claude-sonnet-4-5-x', input: 10, output: 2, cache_read: 100, cache_write: 4 };
    expect(costMicros(prices, u)).toBe(10 * 3 + 2 * 15 + 100 * 0.3 + 4 * 3);
  });

  it('reads since as a span back or a date, in whole UTC days', () => {
    const now = Date.parse('2026-12-01T08:00:00Z');
    expect(sinceDay('7d', now)).toBe('2026-11-24');
    expect(sinceDay('24h', now)).toBe('2026-11-30');
    expect(sinceDay('2026-11-03', now)).toBe('2026-11-03');
    expect(() => sinceDay('last week', now)).toThrow(/neither a span/);
  });
});

describe('docs/costs.md', () => {
  it('shows a config and rules the gateway accepts as written', async () => {
    const { parse } = await import('yaml');
    const { parseConfig } = await import('../server/config.js');
    const doc = readFileSync(new URL('../../docs/costs.md', import.meta.url), 'utf8');
    const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map(
      (m) => parse(m[1]!) as Record<string, unknown>,
    );
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const config = parseConfig(Object.assign({}, ...blocks), 'docs/costs.md');
    expect(config.costs.budgets.agents['review-bot']).toEqual({
      tokens_per_day: 5_000_000,
      cost_per_day: 10,
    });
  });
});
