import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DECISIONS, runtimeCase } from '../runtime.case.js';
import { cursor } from './adapter.js';

const fixturesDir = fileURLToPath(new URL('./fixtures', import.meta.url));
const fixture = (event: string): unknown => JSON.parse(readFileSync(`${fixturesDir}/${event}.json`, 'utf8'));
const parse = (stdout: string): unknown => JSON.parse(stdout);

// Per-event output shapes from the cursor-hooks typings (reference/runtimes.md §6).
const PERMISSION = ['permission', 'userMessage', 'agentMessage'];
const ALLOWED: Record<string, string[]> = {
  beforeShellExecution: PERMISSION,
  beforeMCPExecution: PERMISSION,
  preToolUse: ['decision', 'reason', 'updated_input.*'],
  beforeReadFile: ['permission', 'user_message'],
  beforeSubmitPrompt: ['continue', 'user_message'],
  stop: ['followup_message'],
  subagentStop: ['followup_message'],
  sessionStart: ['env.*', 'additional_context', 'continue', 'user_message'],
};

runtimeCase(cursor, { fixturesDir, allowedKeys: (event) => ALLOWED[event] ?? [] });

describe('Cursor golden replies', () => {
  const shell = cursor.normalize(fixture('beforeShellExecution'));

  it('names the shell intent Shell with its command and cwd', () => {
    expect(shell.intent).toEqual({
      tool: 'Shell',
      input: { command: 'git push --force origin main', cwd: '/Users/me/project' },
    });
    expect(shell.sessionId).toBe('conv_7d1f2a');
    expect(shell.envelopes[0]).toMatchObject({
      execution: { turn_id: 'gen_42' },
      redacted_summary: { cwd: 'project' },
    });
  });

  it('denies a shell command with permission deny and both messages', () => {
    const reason = 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).';
    expect(parse(cursor.reply(shell, SAMPLE_DECISIONS.deny).stdout)).toEqual({
      permission: 'deny',
      userMessage: reason,
      agentMessage: reason,
    });
    expect(parse(cursor.reply(shell, SAMPLE_DECISIONS.allow).stdout)).toEqual({ permission: 'allow' });
  });

  it('asks the user natively on require_approval, naming the approval id', () => {
    const out = parse(cursor.reply(shell, SAMPLE_DECISIONS.require_approval).stdout);
    expect(out).toMatchObject({ permission: 'ask' });
    expect(JSON.stringify(out)).toContain('apr_01JCASEAPPROVAL0000000000');
  });

  it('refuses a modify on a shell command, which cannot be rewritten', () => {
    expect(parse(cursor.reply(shell, SAMPLE_DECISIONS.modify).stdout)).toMatchObject({ permission: 'deny' });
  });

  it('parses an MCP tool_input given as a JSON string', () => {
    expect(cursor.normalize(fixture('beforeMCPExecution')).intent).toEqual({
      tool: 'create_issue',
      input: { title: 'Bug', repo: 'me/project' },
    });
  });

  it('answers preToolUse with decision, reason and updated_input', () => {
    const n = cursor.normalize(fixture('preToolUse'));
    expect(parse(cursor.reply(n, SAMPLE_DECISIONS.modify).stdout)).toEqual({
      decision: 'allow',
      updated_input: { command: 'echo safe' },
    });
    expect(parse(cursor.reply(n, SAMPLE_DECISIONS.require_approval).stdout)).toMatchObject({
      decision: 'deny',
    });
  });

  it('uses user_message (snake case) where the typings do', () => {
    expect(
      parse(cursor.reply(cursor.normalize(fixture('beforeReadFile')), SAMPLE_DECISIONS.deny).stdout),
    ).toEqual({
      permission: 'deny',
      user_message: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
    });
    expect(
      parse(cursor.reply(cursor.normalize(fixture('beforeSubmitPrompt')), SAMPLE_DECISIONS.deny).stdout),
    ).toEqual({
      continue: false,
      user_message: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
    });
  });

  it('keeps file contents out of the summary of a read', () => {
    const n = cursor.normalize(fixture('beforeReadFile'));
    expect(JSON.stringify(n.envelopes[0])).not.toContain('SECRET');
    expect(n.intent).toEqual({ tool: 'Read', input: { file_path: '/Users/me/project/.env' } });
  });
});
