import { describe, expect, it } from 'vitest';
import { parseTasksConfig } from './config.js';
import { planResume } from './resume.js';
import type { TaskRow } from './sql.js';

const base = {
  id: 'tsk_1',
  state: 'completed',
  runtime: 'claude-code',
  session_id: 'sess-1',
  action: JSON.stringify({ type: 'command', command: ['agent'], cwd: '/repo', env_keys: [] }),
} as TaskRow;
const cfg = parseTasksConfig({});

describe('planResume', () => {
  it('renders the runtime resume command and keeps the original cwd', () => {
    expect(planResume(base, cfg, false, '/w/m.txt')).toEqual({
      ok: true,
      argv: ['claude', '-p', '--resume', 'sess-1'],
      cwd: '/repo',
    });
  });

  it('uses a configured template, which may name the message file but nothing unknown', () => {
    const custom = parseTasksConfig({
      resume: { 'claude-code': ['my-claude', '{{session_id}}', '{{message_file}}'] },
    });
    expect(planResume(base, custom, false, '/w/m.txt')).toMatchObject({
      argv: ['my-claude', 'sess-1', '/w/m.txt'],
    });
    const bad = parseTasksConfig({ resume: { 'claude-code': ['my-claude', '{{message}}'] } });
    expect(planResume(base, bad, false, '/w/m.txt')).toMatchObject({ ok: false });
  });

  it('refuses with one clear sentence for each reason', () => {
    const cases: [Partial<TaskRow>, boolean, string][] = [
      [{ session_id: null }, false, 'no session id'],
      [{ runtime: null }, false, 'no runtime'],
      [{ runtime: 'hermes' }, false, 'tasks.resume.hermes'],
      [{ state: 'submitted' }, false, 'is submitted'],
      [{ state: 'canceled' }, false, 'is canceled'],
      [{}, true, 'still running'],
      [{ action: JSON.stringify({ type: 'notify', channels: [] }) }, false, 'only command tasks'],
    ];
    for (const [over, running, text] of cases) {
      const plan = planResume({ ...base, ...over }, cfg, running, '/w/m.txt');
      expect(plan.ok).toBe(false);
      if (!plan.ok) expect(plan.error).toContain(text);
    }
  });
});
