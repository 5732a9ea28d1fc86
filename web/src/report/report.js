// Entry point of the self-contained HTML report. Reads the data the C++ side embedded in
// <script type="application/json" id="gpuwatch-data"> (schema gpuwatch.report/1, or a sweep's
// gpuwatch.sweep/1: sweep_page.js), renders the page, and publishes window.gpuwatchReport for the browser check (tests/browser/).

import 'uplot/dist/uPlot.min.css';
import '../lib/theme.css';
import './report.css';
import { el } from '../lib/dom.js';
import { readTheme, onColorSchemeChange, kSeverities } from '../lib/palette.js';
import { buildChartSpecs } from './chart_specs.js';
import { readGpuColors, gpuColorVar } from '../lib/gpu_palette.js';
import { ChartsSection } from './charts_section.js';
import * as sections from './sections.js';
import { renderSweep } from './sweep_page.js';

const kSchema = 'gpuwatch.report/1';

function readData() {
  const node = document.getElementById('gpuwatch-data');
  if (!node) throw new Error('gpuwatch report: no #gpuwatch-data element');
  return JSON.parse(node.textContent);
}

// Annotations with a usable time, sorted by time (stable), severity defaulting to info.
function normaliseAnnotations(list) {
  return (list || [])
    .map((a, i) => ({ a, i }))
    .filter(({ a }) => a && typeof a.t === 'number' && isFinite(a.t))
    .sort((x, y) => x.a.t - y.a.t || x.i - y.i)
    .map(({ a }) => ({
      t: a.t,
      kind: a.kind || 'mark',
      severity: kSeverities.includes(a.severity) ? a.severity : 'info',
      gpu: a.gpu == null ? null : a.gpu,
      text: a.text == null ? '' : String(a.text),
    }));
}

function fullRange(data) {
  const t = data.t || [];
  if (t.length >= 2) return [t[0], t[t.length - 1]];
  const r = data.range || {};
  if (r.start != null && r.end != null && r.end > r.start) return [r.start, r.end];
  const t0 = t.length ? t[0] : 0;
  return [t0 - 1, t0 + 1];
}

function render(root, data) {
  const t = data.t || [];
  const annotations = normaliseAnnotations(data.annotations);
  // The GPU colours follow the colour scheme (lib/theme.css): the specs are made again when it
  // changes.
  const specsNow = () => buildChartSpecs({ ...data, t, gpuColors: readGpuColors() });
  const specs = specsNow();
  const range = fullRange(data);
  const start = data.range && data.range.start != null ? data.range.start : range[0];

  const charts = new ChartsSection({ specs, t, annotations, start, fullRange: range });
  let selected = null;
  const onSelectEvent = (a, row) => {
    if (selected) selected.classList.remove('gw-selected');
    selected = row;
    row.classList.add('gw-selected');
    charts.zoomAround(a.t);
    const first = charts.cards.getBoundingClientRect();
    if (first.bottom < 0 || first.top > window.innerHeight) charts.root.scrollIntoView({ block: 'start' });
  };

  root.append(
    ...[
      sections.demoBanner(data),
      data.schema && data.schema !== kSchema
        ? el('div', { class: 'gw-warning' }, `This report has schema \u201c${data.schema}\u201d; this page was built for ${kSchema}.`)
        : null,
      sections.header(data),
      el('div', { class: 'gw-overview' }, sections.summary(data),
        el('div', { class: 'gw-side' }, sections.devices(data, gpuColorVar), sections.environment(data))),
      charts.root,
      sections.events(data, annotations, onSelectEvent),
      sections.jobDetails(data),
      sections.footer(data),
    ].filter(Boolean));

  charts.render(readTheme());
  onColorSchemeChange(() => {
    charts.specs = specsNow();
    charts.render(readTheme());
  });

  window.gpuwatchReport = {
    ready: true,
    get charts() { return charts.specs.map((s) => ({
      id: s.id,
      title: s.title,
      series: s.dataSeries,
      points: t.length,
      nonNull: s.nonNull,
      // Each series as specified, in legend order: kind 'gpu' | 'process' | 'framework' |
      // 'reference', its GPU, colour and dash.
      seriesInfo: s.series.map((x) => ({
        label: x.label, kind: x.kind || null, gpu: x.gpu == null ? null : x.gpu, pid: x.pid == null ? null : x.pid,
        color: x.color, dash: x.dash || null,
      })),
    })); },
    annotations: annotations.length,
    summaryRows: (data.summary || []).length,
    // For tests: the visible x range of each drawn chart, and the whole run's.
    xRanges: () => charts.group.charts.map((u) => [u.scales.x.min, u.scales.x.max]),
    fullRange: range.slice(),
  };
}

function main() {
  const root = document.getElementById('gpuwatch-report') || document.body;
  let data;
  try {
    data = readData();
  } catch (e) {
    root.append(el('div', { class: 'gw-warning' }, `This report's data could not be read: ${e.message}`));
    throw e;
  }
  // A sweep's document (gpuwatch sweep --report, or gpuwatch report SWEEP.json) has its own page.
  if (typeof data.schema === 'string' && data.schema.startsWith('gpuwatch.sweep/')) renderSweep(root, data);
  else render(root, data);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
else main();
