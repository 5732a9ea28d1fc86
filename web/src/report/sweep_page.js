// The page of a `gpuwatch sweep` (data of schema gpuwatch.sweep/1; report.js picks it by the
// schema): the DEMO banner, the command and the GPU, the verdict, the charts (sweep_specs.js)
// and the table of runs. Publishes window.gpuwatchReport for the browser check
// (tests/browser/check_sweep_report.mjs).

import { el, clear } from '../lib/dom.js';
import { formatBytes, kNone } from '../lib/format.js';
import { readTheme, onColorSchemeChange } from '../lib/palette.js';
import { readGpuColors, gpuColor, readThresholdColor } from '../lib/gpu_palette.js';
import { observeWidth } from '../lib/chart_group.js';
import './sweep.css';
import { buildSweepSpecs } from './sweep_specs.js';
import { makeXyChart } from './sweep_chart.js';

const kChartHeight = 320;

function colors(data) {
  const style = getComputedStyle(document.documentElement);
  const v = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  const gpu = gpuColor(readGpuColors(), data.gpu || 0);
  const others = readGpuColors().filter((c) => c !== gpu);
  return {
    gpu,
    allocated: others[1] || '#efb118',
    reserved: others[2] || '#ff725c',
    fit: v('--gw-text', '#1f2328'),
    threshold: readThresholdColor(),
    muted: v('--gw-muted', '#5f6873'),
    critical: v('--gw-sev-critical', '#d62b2b'),
    ok: v('--gw-ok', '#1f9d55'),
  };
}

function banner(data) {
  if (!data.demo) return null;
  return el('div', { class: 'gw-demo', id: 'gw-demo', role: 'note' },
    el('strong', null, 'DEMO'),
    ' \u2014 simulated GPUs (the demo fleet or a scenario): the fake NVML library gave these runs their memory. Nothing here was measured on a real GPU.');
}

function header(data) {
  const command = (data.command || []).join(' ');
  const facts = [
    ['Command', command],
    ['GPU', `${data.gpu} (${data.gpu_name || 'unknown'})`],
    ['Free before the first run', `${formatBytes(data.free_memory_bytes)} of ${formatBytes(data.total_memory_bytes)}`],
    ['Margin', `${Math.round((data.margin || 0) * 100)} %`],
    ['Mode', data.mode],
  ];
  return el('header', { class: 'gw-header' },
    el('h1', null, data.title || 'gpuwatch sweep'),
    el('dl', { class: 'gw-facts' }, facts.map(([k, v]) => el('div', null, el('dt', null, k), el('dd', null, v)))));
}

function verdict(data) {
  const lines = data.verdict || [];
  const noFit = data.mode !== 'concurrency' && data.fit == null;
  return el('section', { class: 'gw-card gw-sweep-verdict', id: 'gw-sweep-verdict' },
    el('h2', null, 'Verdict'),
    noFit ? el('p', { class: 'gw-warning', id: 'gw-sweep-nofit' },
      'No memory fit: too few runs fit in memory, so there is no fitted curve and no predicted largest batch. '
      + 'Try smaller values.') : null,
    lines.length ? el('pre', { class: 'gw-sweep-lines' }, lines.join('\n')) : el('p', { class: 'gw-muted' }, 'Nothing to conclude.'));
}

const gibOr = (v) => (v == null ? kNone : formatBytes(v));
const rate = (v) => (v == null ? kNone : v.toFixed(1));

function runsTable(data) {
  const concurrency = data.mode === 'concurrency';
  const head = concurrency
    ? ['copies', 'result', 'process mem', 'device mem', 'total/s', 'each/s', 'how it ended']
    : ['bs', 'result', 'process mem', 'device mem', 'allocated', 'reserved', 'steps/s', 'how it ended'];
  const rows = (data.runs || []).map((r) => {
    const c = (r.per_copy && r.per_copy[0]) || {};
    const anyRate = (r.per_copy || []).some((x) => x.throughput_per_s != null);
    const cells = concurrency
      ? [r.copies, r.result, gibOr(r.peak_process_memory_bytes), gibOr(r.peak_device_memory_bytes),
        anyRate ? rate(r.total_throughput_per_s) : kNone, (r.per_copy || []).map((x) => rate(x.throughput_per_s)).join(' ')]
      : [r.value, r.result, gibOr(r.peak_process_memory_bytes), gibOr(r.peak_device_memory_bytes),
        gibOr(c.framework_allocated_bytes), gibOr(c.framework_reserved_bytes), anyRate ? rate(r.total_throughput_per_s) : kNone];
    return el('tr', { class: `gw-sweep-${r.result}` },
      cells.map((v, i) => el('td', { class: i === 1 ? null : 'gw-num' }, v)),
      el('td', { class: 'gw-muted' }, r.reason || ''));
  });
  return el('section', { class: 'gw-card', id: 'gw-sweep-runs' },
    el('h2', null, 'Runs'),
    el('div', { class: 'gw-table-wrap' },
      el('table', { class: 'gw-table' },
        el('thead', null, el('tr', null, head.map((h, i) => el('th', { class: i === 1 || i === head.length - 1 ? null : 'gw-num' }, h)))),
        el('tbody', null, rows))));
}

export function renderSweep(root, data) {
  const cards = el('div', { class: 'gw-charts' });
  root.append(...[banner(data), header(data), verdict(data), cards, runsTable(data)].filter(Boolean));
  let specs = [];
  let charts = [];
  const draw = () => {
    for (const u of charts) u.destroy();
    clear(cards);
    specs = buildSweepSpecs(data, colors(data));
    const theme = readTheme();
    const width = Math.max(320, cards.clientWidth - 32);
    charts = specs.map((spec) => {
      const host = el('div', { class: 'gw-plot' });
      cards.appendChild(el('section', { class: 'gw-card gw-chart', id: `gw-chart-${spec.id}`, 'data-chart-id': spec.id },
        el('div', { class: 'gw-card-head' }, el('h2', null, spec.title), el('span', { class: 'gw-unit' }, spec.unit)),
        host));
      return makeXyChart(host, { spec, width, height: kChartHeight, theme });
    });
  };
  draw();
  onColorSchemeChange(draw);
  observeWidth(cards, () => {
    const width = Math.max(320, cards.clientWidth - 32);
    for (const u of charts) u.setSize({ width, height: kChartHeight });
  });

  // For the browser check: what is on each chart's canvas where its marks and its fit line are.
  const pixels = (id) => {
    const i = specs.findIndex((x) => x.id === id);
    const u = charts[i];
    const spec = specs[i];
    if (!u) return { marks: [], fit: null };
    const ctx = u.ctx;
    const image = ctx.getImageData(0, 0, u.ctx.canvas.width, u.ctx.canvas.height);
    const rgb = (color) => {
      const probe = document.createElement('canvas').getContext('2d');
      probe.fillStyle = color;
      probe.fillRect(0, 0, 1, 1);
      return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3));
    };
    const near = (x, y, want) => {
      if (x < 0 || y < 0 || x >= image.width || y >= image.height) return false;
      const k = (Math.round(y) * image.width + Math.round(x)) * 4;
      return Math.abs(image.data[k] - want[0]) + Math.abs(image.data[k + 1] - want[1]) + Math.abs(image.data[k + 2] - want[2]) < 60;
    };
    const marks = (spec.marks || []).map((m) => {
      const want = rgb(m.color);
      const x = u.valToPos(m.x, 'x', true);
      let hits = 0;
      for (let y = u.bbox.top; y < u.bbox.top + u.bbox.height; y++) {
        if ([-1, 0, 1].some((d) => near(x + d, y, want))) hits++;
      }
      return { kind: m.kind, x: m.x, color: m.color, hits };
    });
    const f = spec.series.findIndex((x) => x.kind === 'fit');
    let fit = null;
    if (f >= 0) {
      const want = rgb(spec.series[f].color);
      let hits = 0;
      for (const share of [0.15, 0.3, 0.45, 0.6, 0.75]) {
        const j = Math.round((spec.x.length - 1) * share);
        const x = u.valToPos(spec.x[j], 'x', true);
        const y = u.valToPos(spec.series[f].values[j], 'y', true);
        let found = false;
        for (let dx = -2; dx <= 2 && !found; dx++) for (let dy = -2; dy <= 2 && !found; dy++) found = near(x + dx, y + dy, want);
        if (found) hits++;
      }
      fit = { color: spec.series[f].color, hits };
    }
    return { marks, fit };
  };

  window.gpuwatchReport = {
    pixels,
    ready: true,
    kind: 'sweep',
    noFit: data.mode !== 'concurrency' && data.fit == null,
    runRows: (data.runs || []).length,
    // Per chart, each series with how many points it has, and the marks.
    get charts() {
      return specs.map((s, i) => ({
        id: s.id,
        drawn: !!charts[i] && charts[i].series.length === s.series.length + 1,
        series: s.series.map((x) => ({ label: x.label, kind: x.kind, points: x.values.filter((v) => v != null).length })),
        marks: (s.marks || []).map((m) => ({ kind: m.kind, x: m.x, label: m.label })),
      }));
    },
  };
}
