import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DECISIONS, runtimeCase } from '../runtime.case.js';
import { codex } from './adapter.js';
import { APPROVAL_METHODS } from './app-server.js';

const fixturesDir = fileURLToPath(new URL('./fixtures', import.meta.url));
const text = (event: string): string => readFileSync(`${fixturesDir}/${event}.json`, 'utf8');
const fixture = (event: string): unknown => JSON.parse(text(event));
const parse = (stdout: string): unknown => JSON.parse(stdout);

// Codex's generated output schemas (additionalProperties:false), reference/runtimes.md §2.3.
const UNIVERSAL = ['continue', 'stopReason', 'suppressOutput', 'systemMessage'];
const ALLOWED: Record<string, string[]> = {
  PreToolUse: [
    'hookSpecificOutput.hookEventName',
    'hookSpecificOutput.permissionDecision',
    'hookSpecificOutput.permissionDecisionReason',
    'hookSpecificOutput.updatedInput.*',
    'hookSpecificOutput.additionalContext',
  ],
  // interrupt, updatedInput and updatedPermissions "currently fail closed": never sent.
  PermissionRequest: [
    'hookSpecificOutput.hookEventName',
    'hookSpecificOutput.decision.behavior',
    'hookSpecificOutput.decision.message',
  ],
  Stop: ['decision', 'reason'],
  // The App Server bridge reads the permission reply (src/runtimes/codex/app-server.ts verdictOf).
  ...Object.fromEntries(
    APPROVAL_METHODS.map((m) => [
      m,
      [
        'hookSpecificOutput.hookEventName',
        'hookSpecificOutput.decision.behavior',
        'hookSpecificOutput.decision.message',
      ],
    ]),
  ),
  UserPromptSubmit: ['decision', 'reason', 'hookSpecificOutput.additionalContext'],
};

runtimeCase(codex, { fixturesDir, allowedKeys: (event) => [...UNIVERSAL, ...(ALLOWED[event] ?? [])] });

describe('Codex golden replies', () => {
  const pre = codex.normalize(fixture('PreToolUse'));
  const perm = codex.normalize(fixture('PermissionRequest'));

  it('reads the PreToolUse intent with its turn and tool call id', () => {
    expect(pre.intent).toEqual({ tool: 'Bash', input: { command: 'git push --force origin main' } });
    expect(pre.envelopes[0]).toMatchObject({ execution: { turn_id: 'turn_456', tool_call_id: 'call_9f2b' } });
  });

  it('denies a PreToolUse with permissionDecision deny and the reason, exit 0', () => {
    const reply = codex.reply(pre, SAMPLE_DECISIONS.deny);
    expect(reply).toMatchObject({ exitCode: 0, stderr: '' });
    expect(parse(reply.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
      },
    });
    expect(reply.httpBody).toBeUndefined();
  });

  it('allows with exactly {} because a plain allow fails the hook', () => {
    expect(codex.reply(pre, SAMPLE_DECISIONS.allow)).toEqual({ exitCode: 0, stdout: '{}', stderr: '' });
  });

  it('rewrites with allow plus updatedInput and nothing else', () => {
    expect(parse(codex.reply(pre, SAMPLE_DECISIONS.modify).stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        updatedInput: { command: 'echo safe' },
      },
    });
  });

  it('turns require_approval and defer into a deny that names the approval or the deferral', () => {
    const approval = parse(codex.reply(pre, SAMPLE_DECISIONS.require_approval).stdout);
    expect(approval).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(JSON.stringify(approval)).toContain('apr_01JCASEAPPROVAL0000000000');
    expect(codex.reply(pre, SAMPLE_DECISIONS.defer).stdout).toContain('deferred');
  });

  it('never sends ask, defer or a plain allow for any decision', () => {
    for (const d of Object.values(SAMPLE_DECISIONS)) {
      const out = codex.reply(pre, d).stdout;
      const decision = (
        parse(out) as { hookSpecificOutput?: { permissionDecision?: string; updatedInput?: unknown } }
      ).hookSpecificOutput;
      expect(['ask', 'defer']).not.toContain(decision?.permissionDecision);
      if (decision?.permissionDecision === 'allow') expect(decision.updatedInput).toBeDefined();
    }
  });

  it('answers a PermissionRequest with decision.behavior, and lets require_approval fall back to Codex', () => {
    expect(parse(codex.reply(perm, SAMPLE_DECISIONS.allow).stdout)).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
    expect(parse(codex.reply(perm, SAMPLE_DECISIONS.deny).stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: {
          behavior: 'deny',
          message: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
        },
      },
    });
    expect(codex.reply(perm, SAMPLE_DECISIONS.require_approval)).toEqual(codex.neutralReply());
  });

  it('blocks a Stop with decision block and a non-blank reason', () => {
    const out = parse(codex.reply(codex.normalize(fixture('Stop')), SAMPLE_DECISIONS.deny).stdout);
    expect(out).toEqual({
      decision: 'block',
      reason: 'Switchboard: denied (No force pushes to main [FORCE_PUSH]).',
    });
  });

  it('reads the notify payload from the last argv item', () => {
    const n = codex.normalize(undefined, {
      argv: ['node', 'switchboard', 'hook', 'codex', text('agent-turn-complete')],
    });
    expect(n.event).toBe('agent-turn-complete');
    expect(n.envelopes[0]).toMatchObject({
      type: 'agent.turn.completed',
      execution: { session_id: 'b5f6c1c2-1111-2222-3333-444455556666', turn_id: '12345' },
      redacted_summary: { event: 'agent-turn-complete', cwd: 'project' },
    });
    expect(JSON.stringify(n.envelopes[0])).not.toContain('Rename');
    expect(n.blocking).toBe(false);
  });

  it('answers malformed stdin with exit 2 and a non-empty stderr, so the tool is blocked', () => {
    const reply = codex.reply(codex.normalize('not json'), null);
    expect(reply.exitCode).toBe(2);
    expect(reply.stderr.length).toBeGreaterThan(0);
  });
});
