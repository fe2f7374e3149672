import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DECISIONS, runtimeCase } from '../runtime.case.js';
import { claudeCode } from './adapter.js';

const fixturesDir = fileURLToPath(new URL('./fixtures', import.meta.url));
const fixture = (event: string): unknown => JSON.parse(readFileSync(`${fixturesDir}/${event}.json`, 'utf8'));
const parse = (stdout: string): unknown => JSON.parse(stdout);

// Key paths from the Claude Code hooks reference (reference/runtimes.md §1.6).
const UNIVERSAL = ['continue', 'stopReason', 'suppressOutput', 'systemMessage'];
const TOP_BLOCK = ['decision', 'reason'];
const ALLOWED: Record<string, string[]> = {
  PreToolUse: [
    'hookSpecificOutput.hookEventName',
    'hookSpecificOutput.permissionDecision',
    'hookSpecificOutput.permissionDecisionReason',
    'hookSpecificOutput.updatedInput.*',
    'hookSpecificOutput.additionalContext',
  ],
  PermissionRequest: [
    'hookSpecificOutput.hookEventName',
    'hookSpecificOutput.decision.behavior',
    'hookSpecificOutput.decision.updatedInput.*',
    'hookSpecificOutput.decision.message',
    'hookSpecificOutput.decision.interrupt',
  ],
  Elicitation: [
    'hookSpecificOutput.hookEventName',
    'hookSpecificOutput.action',
    'hookSpecificOutput.content.*',
  ],
  ElicitationResult: [
    'hookSpecificOutput.hookEventName',
    'hookSpecificOutput.action',
    'hookSpecificOutput.content.*',
  ],
};
for (const event of [
  'UserPromptSubmit',
  'UserPromptExpansion',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Stop',
  'SubagentStop',
  'ConfigChange',
  'PreCompact',
]) {
  ALLOWED[event] = TOP_BLOCK;
}

runtimeCase(claudeCode, { fixturesDir, allowedKeys: (event) => [...UNIVERSAL, ...(ALLOWED[event] ?? [])] });

describe('Claude Code golden replies', () => {
  const pre = claudeCode.normalize(fixture('PreToolUse'));
  const perm = claudeCode.normalize(fixture('PermissionRequest'));

  it('reads the PreToolUse intent, tool call id, turn and session', () => {
    expect(pre.intent).toEqual({
      tool: 'Bash',
      input: {
        command: 'npm test',
        description: 'Run test suite',
        timeout: 120000,
        run_in_background: false,
      },
    });
    expect(pre.envelopes[0]).toMatchObject({
      type: 'agent.tool.requested',
      execution: {
        session_id: 'abc123',
        tool_call_id: 'toolu_01ABC123',
        turn_id: '550e8400-e29b-41d4-a716-446655440000',
      },
      subject: { tool: 'Bash' },
      redacted_summary: { event: 'PreToolUse', tool: 'Bash', cwd: 'my-project' },
    });
    expect(JSON.stringify(pre.envelopes[0]?.redacted_summary)).not.toContain('npm test');
  });

  it('denies a PreToolUse with permissionDecision deny and the reason, exit 0', () => {
    const reply = claudeCode.reply(pre, SAMPLE_DECISIONS.deny);
    expect(reply.exitCode).toBe(0);
    expect(parse(reply.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
      },
    });
    expect(reply.httpBody).toEqual(parse(reply.stdout));
  });

  it('allows a PreToolUse with permissionDecision allow', () => {
    const out = parse(claudeCode.reply(pre, SAMPLE_DECISIONS.allow).stdout);
    expect(out).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'Switchboard: allowed (READ_ONLY).',
      },
    });
  });

  it('asks the user natively on require_approval and names the approval id', () => {
    const out = parse(claudeCode.reply(pre, SAMPLE_DECISIONS.require_approval).stdout);
    expect(out).toMatchObject({ hookSpecificOutput: { permissionDecision: 'ask' } });
    expect(JSON.stringify(out)).toContain('apr_01JCASEAPPROVAL0000000000');
  });

  it('defers a PreToolUse with permissionDecision defer', () => {
    const out = parse(claudeCode.reply(pre, SAMPLE_DECISIONS.defer).stdout);
    expect(out).toMatchObject({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'defer' },
    });
  });

  it('rewrites a PreToolUse with allow and the whole updatedInput', () => {
    const out = parse(claudeCode.reply(pre, SAMPLE_DECISIONS.modify).stdout);
    expect(out).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: 'echo safe' } },
    });
  });

  it('answers a PermissionRequest with decision.behavior', () => {
    expect(perm.intent?.tool).toBe('Bash');
    expect(parse(claudeCode.reply(perm, SAMPLE_DECISIONS.allow).stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
    expect(parse(claudeCode.reply(perm, SAMPLE_DECISIONS.deny).stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: {
          behavior: 'deny',
          message: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
        },
      },
    });
    expect(parse(claudeCode.reply(perm, SAMPLE_DECISIONS.modify).stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'allow', updatedInput: { command: 'echo safe' } },
      },
    });
  });

  it('leaves the native permission dialog up on require_approval, and denies a defer it cannot park', () => {
    expect(claudeCode.reply(perm, SAMPLE_DECISIONS.require_approval)).toEqual(claudeCode.neutralReply());
    const out = parse(claudeCode.reply(perm, SAMPLE_DECISIONS.defer).stdout);
    expect(out).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'deny' } } });
    expect(JSON.stringify(out)).toContain('deferred');
  });

  it('blocks a Stop or a prompt with the top-level decision, and answers nothing on allow', () => {
    for (const event of ['Stop', 'UserPromptSubmit']) {
      const n = claudeCode.normalize(fixture(event));
      expect(parse(claudeCode.reply(n, SAMPLE_DECISIONS.deny).stdout)).toEqual({
        decision: 'block',
        reason: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
      });
      expect(claudeCode.reply(n, SAMPLE_DECISIONS.allow)).toEqual(claudeCode.neutralReply());
    }
  });

  it('blocks the exit-code-only events with exit 2 and the reason on stderr', () => {
    const reply = claudeCode.reply(claudeCode.normalize(fixture('TaskCreated')), SAMPLE_DECISIONS.deny);
    expect(reply).toMatchObject({ exitCode: 2, stdout: '', stderr: expect.stringContaining('FORCE_PUSH') });
  });

  it('observes PostToolUse, SessionStart and Stop without a decision', () => {
    for (const event of ['PostToolUse', 'SessionStart', 'Stop']) {
      const n = claudeCode.normalize(fixture(event));
      expect(n.intent).toBeUndefined();
      expect(claudeCode.reply(n, null)).toEqual({ exitCode: 0, stdout: '', stderr: '', httpBody: {} });
    }
  });

  it('answers unreadable stdin with exit 2 so a PreToolUse fails closed', () => {
    const n = claudeCode.normalize('{"hook_event_name":"PreToolUse",');
    expect(claudeCode.reply(n, null)).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: 'switchboard: hook input is not valid JSON',
    });
  });
});
