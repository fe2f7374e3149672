import { AppError } from '../../errors/index.js';
import type { ShadowReport } from '../../gate/port.js';
import { type ConsoleContext, fields, html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import { badge, escapeHtml, hidden, layout, link, table } from '../shell.js';
import { ADMIN, type ConsoleRouter, frame, guard, need } from './common.js';

/** The window a person picks most (the gate's own default too). */
const DEFAULT_SINCE = '7d';
/** Intents re-decided unless the form says; the gate caps it again at its own maximum. */
const DEFAULT_LIMIT = 10_000;
const MAX_LIMIT = 100_000;
/** Changed intents listed; the counts cover every one. */
const CHANGES_SHOWN = 500;
/** `7d`, `24h`, `30m`, or an ISO 8601 time: the gate parses it, this only keeps junk out of the form. */
const SINCE = /^(\d{1,6}[mhd]|\d{4}-\d{2}-\d{2}[0-9T:.+\-Z]{0,24})$/;

interface ShadowForm {
  policy_yaml?: string;
  since?: string;
  limit?: string;
}

function shadowForm(csrf: string | null, v: ShadowForm): string {
  return `<form class="simulate" method="post" action="/console/policy/shadow">${hidden(csrf)}
<label for="sh-yaml">Draft policy (YAML: <code>rules:</code> and <code>gate:</code> as a config or policy file has them)</label>
<textarea id="sh-yaml" name="policy_yaml" rows="12" spellcheck="false" placeholder="rules:&#10;  - id: no-force-push&#10;    when: input.command.contains(&quot;push --force&quot;)&#10;    decision: deny&#10;    reason_code: FORCE_PUSH">${escapeHtml(v.policy_yaml ?? '')}</textarea>
<div class="grid">
<label for="sh-since">Since (<code>7d</code>, <code>24h</code>, <code>30m</code> or an ISO time)</label><input id="sh-since" name="since" value="${escapeHtml(v.since ?? DEFAULT_SINCE)}" autocomplete="off">
<label for="sh-limit">At most (newest intents)</label><input id="sh-limit" name="limit" type="number" min="1" max="${MAX_LIMIT}" value="${escapeHtml(v.limit ?? String(DEFAULT_LIMIT))}">
</div>
<button type="submit">Run the draft over the log</button> <small class="mute">Nothing is written: no event, no approval, no capability; the serving policy stays.</small>
</form>`;
}

export function reportBlock(r: ShadowReport): string {
  const counts = Object.entries(r.counts)
    .sort((a, b) => b[1] - a[1])
    .map(([change, n]) => [escapeHtml(change), String(n)]);
  const rows = r.changed
    .slice(0, CHANGES_SHOWN)
    .map((c) => [
      link('/console/events/', c.event_id, 'intent'),
      escapeHtml(c.runtime),
      escapeHtml(c.kind),
      `<code>${escapeHtml(c.summary)}</code>`,
      badge(c.before),
      badge(c.after),
      c.rule ? `<code>${escapeHtml(c.rule)}</code>` : '<span class="mute">none</span>',
    ]);
  const changed = r.changed.length;
  const cut =
    changed > CHANGES_SHOWN
      ? `<p class="mute">The first ${CHANGES_SHOWN} of ${changed} are listed, oldest first.</p>`
      : '';
  const skipped = r.skipped
    ? `<p class="mute">${r.skipped} more could not be re-decided: their payload has left the vault (retention).</p>`
    : '';
  return `<section class="card result" aria-labelledby="shadow-h"><h2 id="shadow-h">${changed} of ${r.evaluated} recorded intents would be decided differently</h2>${skipped}
${counts.length ? table(['Change (before→after)', 'Intents'], counts) : '<p class="empty">The draft decides every recorded intent as it was decided.</p>'}
</section>
${changed ? `<h2>What would change <small class="mute">oldest first</small></h2>${table(['Event', 'Runtime', 'Kind', 'Intent', 'Was', 'Would be', 'Draft rule'], rows)}${cut}` : ''}`;
}

function problemsBlock(err: AppError): string {
  const lines = Array.isArray(err.details) ? (err.details as unknown[]).map(String).slice(0, 20) : [];
  const list = lines.length
    ? `<ul>${lines.map((l) => `<li><code>${escapeHtml(l)}</code></li>`).join('')}</ul>`
    : '';
  return `<section class="card result" role="alert" aria-labelledby="shadow-h"><h2 id="shadow-h">The draft was not run</h2><p>${escapeHtml(err.message)}</p>${list}</section>`;
}

export function shadowPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const admin = guard(ctx, ADMIN);

  const render = async (c: ConsoleContext, v: ShadowForm, result = '', status = 200) => {
    const intro = `<p>Re-decides the intents recorded in the log (hooks, <code>POST /v1/gate/evaluate</code>, touches) under a draft, each with the session history it had, and lists the decisions that would change. <a href="/console/policy">The serving policy</a> stays as it is.</p>`;
    const body = `${intro}${shadowForm(c.get('session')?.csrf ?? null, v)}${result}`;
    return html(c, layout('Shadow run', await frame(c, ctx, 'policy'), body), status);
  };

  r.get('/console/policy/shadow', admin, (c) => {
    need(ctx.deps.gate?.shadow, 'gate', 'the shadow run');
    return render(c, {});
  });

  /** A POST because the draft is a long form, not because it writes: the gate's run records nothing. */
  r.post('/console/policy/shadow', admin, async (c) => {
    const gate = need(ctx.deps.gate, 'gate', 'the shadow run');
    const shadow = need(gate.shadow?.bind(gate), 'gate', 'the shadow run');
    const { one } = fields(c.get('form'), ['policy_yaml', 'since', 'limit']);
    const policyYaml = one.policy_yaml ?? '';
    if (!policyYaml.trim()) throw new AppError('bad_request', 'paste the draft policy (policy_yaml)');
    const since = one.since?.trim() || DEFAULT_SINCE;
    if (!SINCE.test(since)) throw new AppError('bad_request', '`since` is 7d, 24h, 30m or an ISO 8601 time');
    const limit = Number(one.limit?.trim() || DEFAULT_LIMIT);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new AppError('bad_request', `\`limit\` is a whole number from 1 to ${MAX_LIMIT}`);
    try {
      const report = await shadow({ policyYaml, since, limit });
      if (c.req.header('x-requested-with') === 'console') return c.json(report);
      return render(c, one, reportBlock(report));
    } catch (err) {
      // A broken draft is the person's to fix: the form stays filled, the problems under it.
      if (!(err instanceof AppError) || err.code !== 'validation_failed') throw err;
      if (c.req.header('x-requested-with') === 'console') throw err;
      return render(c, one, problemsBlock(err), err.status);
    }
  });
}
