import { describe, expect, it } from 'vitest';
import { agentLimits, breakersSchema } from './config.js';
import { describeTrip, judge } from './judge.js';

const figures = { decisions: 0, denied: 0, side_effects: 0, delivery_failures: 0 };
const limits = { window_seconds: 60, min_decisions: 10 };

describe('judging a window', () => {
  it('trips only above a limit, never at it', () => {
    expect(judge({ ...figures, side_effects: 30 }, { ...limits, side_effects: 30 })).toBeUndefined();
    expect(judge({ ...figures, side_effects: 31 }, { ...limits, side_effects: 30 })).toEqual({
      metric: 'side_effects',
      observed: 31,
      limit: 30,
    });
    expect(judge({ ...figures, delivery_failures: 6 }, { ...limits, delivery_failures: 5 })).toMatchObject({
      metric: 'delivery_failures',
    });
  });

  it('judges the denied ratio only from min_decisions on', () => {
    const l = { ...limits, denied_ratio: 0.2 };
    expect(judge({ ...figures, decisions: 9, denied: 9 }, l)).toBeUndefined();
    expect(judge({ ...figures, decisions: 10, denied: 2 }, l)).toBeUndefined();
    const c = judge({ ...figures, decisions: 10, denied: 3 }, l);
    expect(c).toEqual({ metric: 'denied_ratio', observed: 0.3, limit: 0.2 });
    expect(describeTrip(c!, { ...figures, decisions: 10, denied: 3 }, 60)).toBe(
      '3 of 10 decisions denied in 60 s (30 %, limit 20 %)',
    );
  });

  it('lays a named agent over breakers.agent', () => {
    const cfg = breakersSchema.parse({
      agent: { side_effects: 30 },
      agents: { deployer: { side_effects: 5, window_seconds: 10 } },
    });
    expect(agentLimits(cfg, 'deployer')).toEqual({ window_seconds: 10, min_decisions: 10, side_effects: 5 });
    expect(agentLimits(cfg, 'other')).toEqual({ window_seconds: 60, min_decisions: 10, side_effects: 30 });
    expect(agentLimits(breakersSchema.parse({}), 'other')).toBeUndefined();
  });
});
