import { z } from 'zod';
import { parseId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import { GATE_RUNTIMES } from '../../gate/config.js';
import {
  type GateIntent,
  type PolicyView,
  type Simulation,
  TOOL_KINDS,
  type ToolArgs,
} from '../../gate/port.js';
import { type ConsoleContext, fields, html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import { badge, escapeHtml, hidden, jsonBlock, layout, table, when } from '../shell.js';
import { ADMIN, type ConsoleRouter, frame, guard, need } from './common.js';

const jsonObject = z.record(z.string(), z.unknown());
/** The intent of `POST /v1/gate/evaluate`, pasted whole; unknown fields are refused as there. */
const intentSchema = z.strictObject({
  tool: z.string().min(1).max(200),
  input: jsonObject,
  action: z.string().min(1).max(500).optional(),
  resource: z.string().min(1).max(2000).optional(),
  task_id: z
    .string()
    .refine((v) => parseId('task', v) !== undefined, 'not a task id (tsk_…)')
    .optional(),
  session_id: z.string().min(1).max(200).optional(),
  runtime: z.enum(GATE_RUNTIMES).optional(),
  kind: z.enum(TOOL_KINDS).optional(),
  args: jsonObject.optional(),
});
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
/** Who the simulated intent is asked by, unless the form names an agent key's name. */
export const SIMULATED_AGENT = 'simulator';

type FormValues = Partial<
  Record<'intent' | 'tool' | 'input' | 'action' | 'resource' | 'runtime' | 'task_id' | 'agent', string>
>;

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', `${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/** The intent from the form: pasted whole, or built from its fields. */
export function intentOf(v: FormValues): GateIntent {
  const raw: Record<string, unknown> = v.intent?.trim()
    ? (parseJson(v.intent, 'the intent') as Record<string, unknown>)
    : {
        tool: v.tool?.trim() ?? '',
        input: v.input?.trim() ? parseJson(v.input, 'the input') : {},
        ...(v.action?.trim() ? { action: v.action.trim() } : {}),
        ...(v.resource?.trim() ? { resource: v.resource.trim() } : {}),
        ...(v.runtime?.trim() ? { runtime: v.runtime.trim() } : {}),
        ...(v.task_id?.trim() ? { task_id: v.task_id.trim() } : {}),
      };
  const parsed = intentSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AppError(
      'validation_failed',
      parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.length ? i.path.join('.') : '(intent)'}: ${i.message}`)
        .join('; '),
    );
  }
  const b = parsed.data;
  const intent: GateIntent = { tool: b.tool, input: b.input };
  if (b.action !== undefined) intent.action = b.action;
  if (b.resource !== undefined) intent.resource = b.resource;
  if (b.task_id !== undefined) intent.task_id = b.task_id;
  if (b.session_id !== undefined) intent.session_id = b.session_id;
  if (b.runtime !== undefined) intent.runtime = b.runtime;
  if (b.kind !== undefined) intent.kind = b.kind;
  if (b.args !== undefined) intent.args = b.args as ToolArgs;
  return intent;
}

function rulesTable(p: PolicyView, matched: ReadonlySet<string>): string {
  const rows = p.rules.map((r) => [
    `<span id="rule-${escapeHtml(r.id)}" class="${matched.has(r.id) ? 'hit' : ''}">${escapeHtml(r.id)}</span>`,
    badge(r.decision),
    `<code>${escapeHtml(r.reason_code)}</code>`,
    String(r.priority),
    r.tools || r.kinds
      ? escapeHtml([...(r.tools ?? []), ...(r.kinds ?? []).map((k) => `kind ${k}`)].join(', '))
      : '<span class="mute">any</span>',
    `<code class="cel">${escapeHtml(r.when)}</code>`,
    r.source ? escapeHtml(r.source.line > 0 ? `${r.source.file}:${r.source.line}` : r.source.file) : '—',
  ]);
  return table(['Rule', 'Decision', 'Reason code', 'Priority', 'Match', 'When', 'Source'], rows);
}

function simulatorForm(csrf: string | null, v: FormValues): string {
  const val = (k: keyof FormValues) => escapeHtml(v[k] ?? '');
  const runtimes = GATE_RUNTIMES.map(
    (r) => `<option value="${r}"${v.runtime === r ? ' selected' : ''}>${r}</option>`,
  ).join('');
  return `<form class="simulate" method="post" action="/console/policy/simulate">${hidden(csrf)}
<div class="grid">
<label for="s-tool">Tool</label><input id="s-tool" name="tool" value="${val('tool')}" placeholder="Bash" autocomplete="off">
<label for="s-input">Input (JSON)</label><textarea id="s-input" name="input" rows="4" placeholder='{"command": "git push --force"}'>${val('input')}</textarea>
<label for="s-action">Action</label><input id="s-action" name="action" value="${val('action')}" autocomplete="off">
<label for="s-resource">Resource</label><input id="s-resource" name="resource" value="${val('resource')}" autocomplete="off">
<label for="s-runtime">Runtime</label><select id="s-runtime" name="runtime"><option value="">none</option>${runtimes}</select>
<label for="s-task">Task</label><input id="s-task" name="task_id" value="${val('task_id')}" placeholder="tsk_…" autocomplete="off">
<label for="s-agent">Asked by (agent)</label><input id="s-agent" name="agent" value="${val('agent')}" placeholder="${SIMULATED_AGENT}" autocomplete="off">
</div>
<details${v.intent ? ' open' : ''}><summary>Or paste a whole intent</summary>
<label for="s-intent">Intent (JSON, as <code>POST /v1/gate/evaluate</code> takes it)</label>
<textarea id="s-intent" name="intent" rows="5">${val('intent')}</textarea></details>
<button type="submit">Simulate</button> <small class="mute">Nothing is written: no event, no approval, no capability.</small>
</form>`;
}

function resultBlock(sim: Simulation): string {
  const d = sim.decision;
  const matched = d.matched_rules.map(
    (m) => `<a href="#rule-${escapeHtml(m.id)}">${escapeHtml(m.id)}</a> (${escapeHtml(m.decision)})`,
  );
  const errors = sim.errors.map((e) => `${escapeHtml(e.rule_id)}: ${escapeHtml(e.message)}`);
  return `<section class="card result" aria-labelledby="result-h"><h2 id="result-h">Decision ${badge(d.decision)}</h2>
<dl class="facts wide"><dt>Reason code</dt><dd><code>${escapeHtml(d.reason_code)}</code></dd>
<dt>Matched rules</dt><dd>${matched.length ? matched.join(', ') : '<span class="mute">none (no rule matched)</span>'}</dd>
<dt>Plan digest</dt><dd><code class="digest">${escapeHtml(d.plan_digest)}</code></dd>
<dt>Policy revision</dt><dd><code>${escapeHtml(d.policy_revision)}</code></dd>
<dt>Risk</dt><dd>${escapeHtml(sim.risk ?? '—')}</dd>
<dt>Rules looked at</dt><dd>${sim.considered.length ? escapeHtml(sim.considered.join(', ')) : '—'}</dd>
${errors.length ? `<dt>Rule errors</dt><dd>${errors.join('<br>')}</dd>` : ''}
${d.input ? `<dt>Modified input</dt><dd>${jsonBlock(d.input)}</dd>` : ''}</dl></section>`;
}

export function policyPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const admin = guard(ctx, ADMIN);

  const render = async (c: ConsoleContext, values: FormValues, sim?: Simulation) => {
    const gate = need(ctx.deps.gate, 'gate', 'the policy page');
    const p = need(gate.policy?.bind(gate), 'gate', 'the policy page')();
    const now = ctx.deps.now();
    const matched = new Set(sim?.decision.matched_rules.map((m) => m.id) ?? []);
    const status = `<dl class="facts wide"><dt>Revision</dt><dd><code>${escapeHtml(p.revision)}</code></dd>
<dt>Loaded</dt><dd>${when(p.loaded_at, now)}</dd><dt>Rules</dt><dd>${p.rules.length}</dd>
${p.last_error ? `<dt>Last reload</dt><dd class="bad">${escapeHtml(p.last_error)} <small>(the revision above keeps serving)</small></dd>` : ''}</dl>`;
    const body = `${status}
<section aria-labelledby="sim-h"><h2 id="sim-h">Simulator</h2>${simulatorForm(c.get('session')?.csrf ?? null, values)}${sim ? resultBlock(sim) : ''}</section>
<section aria-labelledby="shadow-link-h"><h2 id="shadow-link-h">Shadow run</h2><p>Before you load a draft, <a href="/console/policy/shadow">run it over the recorded intents</a> and see which decisions would change.</p></section>
<section aria-labelledby="rules-h"><h2 id="rules-h">Rules</h2>${rulesTable(p, matched)}</section>`;
    return html(c, layout('Policy', await frame(c, ctx, 'policy'), body));
  };

  r.get('/console/policy', admin, (c) => render(c, {}));

  /** A POST because it carries a form, not because it writes: the gate's dry run records nothing. */
  r.post('/console/policy/simulate', admin, async (c) => {
    const gate = need(ctx.deps.gate, 'gate', 'the simulator');
    const simulate = need(gate.simulate?.bind(gate), 'gate', 'the simulator');
    const { one } = fields(c.get('form'), [
      'intent',
      'tool',
      'input',
      'action',
      'resource',
      'runtime',
      'task_id',
      'agent',
    ]);
    const agent = one.agent?.trim() || SIMULATED_AGENT;
    if (!AGENT_NAME.test(agent)) throw new AppError('bad_request', '`agent` is a key name');
    const intent = intentOf(one);
    const sim = await simulate(intent, { name: agent, role: 'agent' });
    if (c.req.header('x-requested-with') === 'console') return c.json(sim);
    return render(c, one, sim);
  });
}
