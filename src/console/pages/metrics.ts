import { type GlanceKey, type GlanceSeries, GLANCE_KEPT, GLANCE_SAMPLE_MS } from '../glance.js';
import { html } from '../http.js';
import type { ConsoleCtx } from '../module.js';
import { escapeHtml, layout } from '../shell.js';
import { ADMIN, type ConsoleRouter, frame, guard } from './common.js';

/** One small chart: its series (keys of `GlanceSeries`), each with its label and colour class. */
export interface ChartSpec {
  id: string;
  title: string;
  unit: string;
  series: readonly { key: GlanceKey; label: string; tone: 'ok' | 'bad' | 'warn' | 'info' }[];
}

export const CHARTS: readonly ChartSpec[] = [
  {
    id: 'decisions',
    title: 'Gate decisions per second',
    unit: '/s',
    series: [
      { key: 'allowed', label: 'allowed', tone: 'ok' },
      { key: 'denied', label: 'denied', tone: 'bad' },
      { key: 'held', label: 'held (approval or defer)', tone: 'warn' },
    ],
  },
  {
    id: 'approvals',
    title: 'Approvals pending',
    unit: '',
    series: [{ key: 'pending', label: 'pending', tone: 'warn' }],
  },
  {
    id: 'decision-time',
    title: 'Median time to a decision (last 100 decided)',
    unit: 's',
    series: [{ key: 'median_decision_s', label: 'median', tone: 'info' }],
  },
  {
    id: 'failing',
    title: 'Delivery attempts failing per minute',
    unit: '/min',
    series: [{ key: 'failing_per_min', label: 'retry, dead or unknown', tone: 'bad' }],
  },
  {
    id: 'dlq',
    title: 'Dead letters (DLQ size)',
    unit: '',
    series: [{ key: 'dlq', label: 'dead', tone: 'bad' }],
  },
  {
    id: 'webhooks',
    title: 'Webhooks per minute',
    unit: '/min',
    series: [
      { key: 'accepted_per_min', label: 'accepted', tone: 'ok' },
      { key: 'rejected_per_min', label: 'rejected', tone: 'bad' },
    ],
  },
];

/** The newest known value of a series (a rate is null on the first sample only). */
function latest(values: readonly (number | null)[]): number | null {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i]!;
  return null;
}

/**
 * A chart's figure: the current values as text (what a screen reader and a browser without script
 * read), and the box the script draws the chart in (`data-series` names the keys, never data).
 */
export function chartFigure(spec: ChartSpec, s: GlanceSeries): string {
  const now = spec.series
    .map((x) => {
      const v = latest(s[x.key]);
      return `<li><span class="swatch ${x.tone}"></span>${escapeHtml(x.label)}: <b>${v === null ? '—' : escapeHtml(`${v}${spec.unit}`)}</b></li>`;
    })
    .join('');
  const keys = spec.series.map((x) => `${x.key}:${x.tone}:${x.label}`).join('|');
  return `<figure class="chart card" aria-labelledby="c-${spec.id}">
<figcaption id="c-${spec.id}">${escapeHtml(spec.title)}</figcaption>
<ul class="now">${now}</ul>
<div class="plot" data-chart="${escapeHtml(spec.id)}" data-unit="${escapeHtml(spec.unit)}" data-series="${escapeHtml(keys)}" role="img" aria-label="${escapeHtml(`${spec.title}, the last ${(GLANCE_KEPT * GLANCE_SAMPLE_MS) / 60_000} minutes`)}"></div>
</figure>`;
}

export function metricPages(r: ConsoleRouter, ctx: ConsoleCtx): void {
  const admin = guard(ctx, ADMIN);

  r.get('/console/metrics', admin, async (c) => {
    const s = ctx.glance.series();
    const minutes = (GLANCE_KEPT * GLANCE_SAMPLE_MS) / 60_000;
    const body = `<p class="mute">The last ${minutes} minutes, sampled every ${GLANCE_SAMPLE_MS / 1000} s from the metrics registry (rates are this gateway process's; the DLQ and the approvals are the store's). The whole set is at <code>/metrics</code>.</p>
<div class="charts" id="charts">${CHARTS.map((spec) => chartFigure(spec, s)).join('\n')}</div>`;
    const f = await frame(c, ctx, 'metrics');
    return html(
      c,
      layout(
        'Metrics',
        { ...f, scripts: ['uPlot.iife.min.js', 'metrics.js'], styles: ['uPlot.min.css'] },
        body,
      ),
    );
  });

  /** The series as JSON for the charts (the page's script polls it). */
  r.get('/console/metrics/data', admin, (c) => {
    c.header('cache-control', 'no-store');
    return c.json(ctx.glance.series());
  });
}
