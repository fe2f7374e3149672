import { AppError } from '../../errors/index.js';
import type { ToolListing, TouchSummary } from '../../reach/port.js';
import { html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import { badge, escapeHtml, filterForm, idLabel, layout, link, short, table, when } from '../shell.js';
import { ADMIN, type ConsoleRouter, frame, guard, need, queryParam } from './common.js';

/** The newest touches shown (every caller's; the reach table keeps them until they expire). */
const TOUCHES_SHOWN = 100;
const TOOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A touch's outcome as one word the badge knows: done, failed, running, pending (for an approval). */
function outcome(t: TouchSummary): string {
  if (t.status === 'done') return badge('succeeded');
  if (t.status === 'awaiting_approval') return badge('pending');
  if (t.status === 'running') return badge('working');
  return `${badge('failed')}${t.error_code ? ` <code>${escapeHtml(t.error_code)}</code>` : ''}`;
}

/** Per tool: how many of the touches read were its, and when the newest was. Pure. */
export function touchesByTool(touches: readonly TouchSummary[]): Map<string, { n: number; last: string }> {
  const out = new Map<string, { n: number; last: string }>();
  for (const t of touches) {
    const seen = out.get(t.tool);
    if (!seen) out.set(t.tool, { n: 1, last: t.created_at });
    else seen.n += 1;
  }
  return out;
}

function registryRows(
  tools: readonly ToolListing[],
  used: ReadonlyMap<string, { n: number; last: string }>,
  now: number,
): string[][] {
  return tools.map((t) => {
    const u = used.get(t.name);
    return [
      `<a href="/console/tools?tool=${encodeURIComponent(t.name)}">${escapeHtml(t.name)}</a>`,
      escapeHtml(t.kind),
      escapeHtml(t.channel),
      badge(t.permission),
      `${Math.round(t.timeout_ms / 100) / 10} s`,
      escapeHtml(t.description.slice(0, 160)),
      u ? `${u.n} · ${when(u.last, now)}` : '<span class="mute">—</span>',
    ];
  });
}

function touchRows(touches: readonly TouchSummary[], now: number): string[][] {
  return touches.map((t) => [
    when(t.created_at, now),
    `<a href="/console/tools?tool=${encodeURIComponent(t.tool)}">${escapeHtml(t.tool)}</a>`,
    escapeHtml(t.caller),
    t.task_id ? link('/console/tasks/', t.task_id, idLabel(t.task_id)) : '<span class="mute">—</span>',
    escapeHtml(t.channel),
    outcome(t),
    t.cost_ms === null ? '—' : `${t.cost_ms} ms`,
    short(t.request_id, 16),
  ]);
}

export function toolPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  r.get('/console/tools', guard(ctx, ADMIN), async (c) => {
    const reach = need(ctx.deps.reach, 'reach', 'the tools page');
    const tool = queryParam(c, 'tool', TOOL_NAME);
    const tools = reach.list();
    if (tool && !tools.some((t) => t.name === tool))
      throw new AppError('not_found', `no tool named ${JSON.stringify(tool)} in the registry`);
    const recent = need(reach.recent?.bind(reach), 'reach', 'recent touches');
    const [all, shown] = await Promise.all([
      recent({ limit: TOUCHES_SHOWN }),
      tool ? recent({ limit: TOUCHES_SHOWN, tool }) : undefined,
    ]);
    const now = ctx.deps.now();
    const filters = filterForm('/console/tools', [
      { name: 'tool', label: 'Tool', options: tools.map((t) => t.name), ...(tool ? { value: tool } : {}) },
    ]);
    const body = `<section aria-labelledby="reg-h"><h2 id="reg-h">Registry <span class="n">${tools.length}</span> <small class="mute">what agents may touch (<code>GET /v1/tools</code>); touches counted over the newest ${TOUCHES_SHOWN}</small></h2>
${table(['Tool', 'Kind', 'Channel', 'Permission', 'Timeout', 'Description', 'Recent touches'], registryRows(tools, touchesByTool(all), now))}</section>
<section aria-labelledby="touch-h"><h2 id="touch-h">Recent touches${tool ? ` of <code>${escapeHtml(tool)}</code>` : ''} <small class="mute">newest first; params and results stay in the vault</small></h2>
${filters}${table(['When', 'Tool', 'Caller', 'Task', 'Channel', 'Outcome', 'Took', 'Request'], touchRows(shown ?? all, now))}</section>`;
    return html(c, layout('Tools', await frame(c, ctx, 'tools'), body));
  });
}
