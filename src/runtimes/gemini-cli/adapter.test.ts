import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DECISIONS, runtimeCase } from '../runtime.case.js';
import { geminiCli } from './adapter.js';

const fixturesDir = fileURLToPath(new URL('./fixtures', import.meta.url));
const fixture = (event: string): Record<string, unknown> =>
  JSON.parse(readFileSync(`${fixturesDir}/${event}.json`, 'utf8'));
const parse = (stdout: string): unknown => JSON.parse(stdout);

// Gemini CLI common output fields plus BeforeTool's hookSpecificOutput.tool_input (reference/runtimes.md §5).
const COMMON = ['systemMessage', 'suppressOutput', 'continue', 'stopReason', 'decision', 'reason'];

runtimeCase(geminiCli, {
  fixturesDir,
  allowedKeys: (event) => (event === 'BeforeTool' ? [...COMMON, 'hookSpecificOutput.tool_input.*'] : COMMON),
});

describe('Gemini CLI golden replies', () => {
  const before = geminiCli.normalize(fixture('BeforeTool'));

  it('reads the BeforeTool intent', () => {
    expect(before.intent).toEqual({
      tool: 'run_shell_command',
      input: { command: 'rm -rf build', description: 'clean' },
    });
  });

  it('denies with decision deny and the reason, exit 0', () => {
    expect(geminiCli.reply(before, SAMPLE_DECISIONS.deny)).toEqual({
      exitCode: 0,
      stdout: JSON.stringify({
        decision: 'deny',
        reason: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
      }),
      stderr: '',
    });
  });

  it('allows with decision allow', () => {
    expect(parse(geminiCli.reply(before, SAMPLE_DECISIONS.allow).stdout)).toEqual({ decision: 'allow' });
  });

  it('rewrites through hookSpecificOutput.tool_input when no field is removed', () => {
    const n = geminiCli.normalize({ ...fixture('BeforeTool'), tool_input: { command: 'rm -rf build' } });
    expect(parse(geminiCli.reply(n, SAMPLE_DECISIONS.modify).stdout)).toEqual({
      decision: 'allow',
      hookSpecificOutput: { tool_input: { command: 'echo safe' } },
    });
  });

  it('denies a modify that drops a field, since tool_input only merges', () => {
    const out = parse(geminiCli.reply(before, SAMPLE_DECISIONS.modify).stdout) as {
      decision: string;
      reason: string;
    };
    expect(out.decision).toBe('deny');
    expect(out.reason).toContain('description');
  });

  it('denies require_approval with the approval id in the reason', () => {
    const out = parse(geminiCli.reply(before, SAMPLE_DECISIONS.require_approval).stdout);
    expect(out).toMatchObject({ decision: 'deny' });
    expect(JSON.stringify(out)).toContain('apr_01JCASEAPPROVAL0000000000');
  });

  it('records an AfterTool whose response carries an error as agent.tool.failed', () => {
    const n = geminiCli.normalize({
      ...fixture('AfterTool'),
      tool_response: { llmContent: '', error: 'ENOENT' },
    });
    expect(n.envelopes[0]?.type).toBe('agent.tool.failed');
  });

  it('keeps stdout JSON-only even when it has nothing to say', () => {
    expect(geminiCli.reply(geminiCli.normalize(fixture('SessionStart')), null).stdout).toBe('{}');
  });
});
