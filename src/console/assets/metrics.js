// The metrics page's charts: uPlot (loaded before this file) draws each `[data-chart]` box from
// /console/metrics/data, refreshed every sample. The figures as text are in the page already; this
// only draws. Colours come from the style sheet's variables, so light and dark both read.
/* global uPlot */

const REFRESH_MS = 10_000;
const HEIGHT = 150;
const charts = [];

function colour(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(`--${name}`).trim() || '#888';
}

/** `allowed:ok:allowed|denied:bad:denied` → the series a chart shows. */
function seriesOf(box) {
  return box.dataset.series.split('|').map((part) => {
    const [key, tone, ...label] = part.split(':');
    return { key, tone, label: label.join(':') };
  });
}

function options(series, width) {
  const axis = { stroke: colour('mute'), grid: { stroke: colour('line'), width: 1 }, ticks: { show: false } };
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 1] } },
    axes: [
      { ...axis },
      // The unit is in the chart's title: the axis shows numbers, so no label is cut.
      { ...axis, size: 44, values: (_u, ticks) => ticks.map((v) => String(+v.toFixed(2))) },
    ],
    series: [
      {},
      ...series.map((s) => ({
        label: s.label,
        stroke: colour(s.tone),
        width: 2,
        spanGaps: false,
        points: { show: false },
      })),
    ],
  };
}

function columns(data, series) {
  return [data.t, ...series.map((s) => data[s.key] ?? [])];
}

async function load() {
  const res = await fetch('/console/metrics/data', { headers: { 'x-requested-with': 'console' } });
  if (!res.ok) return undefined;
  return res.json();
}

/** The figures as text follow the chart: the newest known value of each series. */
function showLatest(c, data) {
  const unit = c.box.dataset.unit ?? '';
  const items = c.box.closest('figure')?.querySelectorAll('.now b') ?? [];
  c.series.forEach((s, i) => {
    const values = data[s.key] ?? [];
    let v = null;
    for (let j = values.length - 1; j >= 0 && v === null; j--) v = values[j];
    if (items[i]) items[i].textContent = v === null ? '—' : `${v}${unit}`;
  });
}

function width(box) {
  return Math.max(200, Math.floor(box.getBoundingClientRect().width));
}

async function draw() {
  const data = await load();
  if (!data) return;
  if (charts.length === 0) {
    for (const box of document.querySelectorAll('[data-chart]')) {
      const series = seriesOf(box);
      const chart = new uPlot(options(series, width(box)), columns(data, series), box);
      charts.push({ box, series, chart });
    }
    const resized = new ResizeObserver(() => {
      for (const c of charts) c.chart.setSize({ width: width(c.box), height: HEIGHT });
    });
    for (const c of charts) resized.observe(c.box);
    return;
  }
  for (const c of charts) {
    c.chart.setData(columns(data, c.series));
    showLatest(c, data);
  }
}

void draw();
setInterval(() => void draw(), REFRESH_MS);
