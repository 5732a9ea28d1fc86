// The live charts: memory, utilization, temperature and power, for all GPUs or one, over a
// window of 5 min to 30 d. One colour per GPU (lib/gpu_palette.js); each chart's y axis has a
// minimum span (thresholds.js) and dashed threshold lines (80 °C, 90 % of each total memory). A window is first filled from /api/v1/history (step chosen for at
// most ~1000 points), then follows the stream; snapshots that arrive while history loads are
// kept and added after it.

import { el, clear } from '../lib/dom.js';
import { ChartGroup, observeWidth } from '../lib/chart_group.js';
import { FloatingTip } from '../lib/floating_tip.js';
import { makeTimeChart } from '../lib/time_chart.js';
import { formatDuration } from '../lib/format.js';
import { gpuColor, gpuDash, readGpuColors, readThresholdColor } from '../lib/gpu_palette.js';
import { kThresholds, kTemperatureSpanC } from './thresholds.js';
import { getJson } from './api.js';
import { SampleStore, kMetrics, kRanges, stepFor } from './sample_store.js';

const kChartHeight = 190;
const kHistoryFields = kMetrics.map((m) => m.field).join(',');

// y ranges with a minimum span, so that noise of a degree or a watt does not fill a chart:
// memory 0..the largest total shown, power 0..the largest limit shown (ceiling(): that value, or
// null), utilization 0..100 %, temperature kTemperatureSpanC and 5 °C beyond the data.
function yRangeOf(metricId, ceiling) {
  if (metricId === 'utilization') return () => [0, 100];
  if (metricId === 'temperature') {
    return (u, min, max) => [
      Math.min(kTemperatureSpanC[0], Math.floor((min ?? kTemperatureSpanC[0]) - 5)),
      Math.max(kTemperatureSpanC[1], Math.ceil((max ?? kTemperatureSpanC[1]) + 5)),
    ];
  }
  return (u, min, max) => [0, Math.max(1, max || 0, ceiling() || 0) * 1.03];
}

export class LiveCharts {
  constructor() {
    this.store = new SampleStore();
    this.range = kRanges[0];
    this.selected = 'all'; // 'all' or a GPU index
    this.devices = []; // [{ index, name }]
    this.interval = 1;
    this.charts = []; // [{ metric, u, data }]
    this.group = null;
    this.tips = null;
    this.theme = null;
    this.loading_token = 0;
    this.pending = null; // snapshots received while history loads
    this.stop_observing = null;
    this.last_snapshot = null;
    this.started = false;
    this.dirty = false;
    this.needs_build = false;
    this.loaded = false; // the first history load is done (for the test hook)

    this.range_buttons = kRanges.map((r) => el('button', {
      type: 'button', class: 'gw-seg-button', 'data-range': r.id, 'aria-pressed': String(r === this.range),
      onclick: () => this.setRange(r.id),
    }, r.label));
    this.gpu_select = el('select', { class: 'gw-select', 'aria-label': 'GPU shown in the charts', onchange: () => this.select(this.gpu_select.value) });
    this.status = el('span', { class: 'gw-chart-status gw-muted', 'aria-live': 'polite' });
    this.grid = el('div', { class: 'gw-chart-grid' });
    this.root = el('section', { class: 'gw-charts-panel', 'aria-label': 'Charts' },
      el('div', { class: 'gw-section-head' },
        el('h2', null, 'History'),
        el('div', { class: 'gw-segmented', role: 'group', 'aria-label': 'Time range' }, this.range_buttons),
        this.gpu_select,
        this.status),
      this.grid);
  }

  // Called with every snapshot (already normalised).
  onSnapshot(snapshot) {
    this.last_snapshot = snapshot;
    this.interval = snapshot.interval;
    const devices = snapshot.devices.map((d) => ({ index: d.index, name: d.name }));
    const changed = devices.map((d) => `${d.index}:${d.name}`).join() !== this.devices.map((d) => `${d.index}:${d.name}`).join();
    if (changed) {
      this.devices = devices;
      this.fillSelect();
    }
    if (!this.started) {
      this.started = true;
      this.loadHistory();
    }
    if (this.pending) {
      this.pending.push(snapshot);
      if (this.pending.length > 600) this.pending.shift();
      return;
    }
    if (this.store.addSnapshot(snapshot) || changed) this.dirty = true;
    if (changed) this.needs_build = true;
  }

  // Draws what onSnapshot collected; called once per animation frame at most.
  flush() {
    if (this.needs_build) this.build();
    else if (this.dirty) this.redraw();
    this.dirty = false;
  }

  fillSelect() {
    clear(this.gpu_select);
    this.gpu_select.appendChild(el('option', { value: 'all' }, 'All GPUs'));
    for (const d of this.devices) this.gpu_select.appendChild(el('option', { value: String(d.index) }, `GPU ${d.index} \u00b7 ${d.name}`));
    if (this.selected !== 'all' && !this.devices.some((d) => d.index === this.selected)) this.selected = 'all';
    this.gpu_select.value = String(this.selected);
  }

  select(value) {
    this.selected = value === 'all' ? 'all' : Number(value);
    this.gpu_select.value = String(this.selected);
    this.build();
  }

  setRange(id) {
    const r = kRanges.find((x) => x.id === id);
    if (!r) return;
    this.range = r;
    for (const b of this.range_buttons) b.setAttribute('aria-pressed', String(b.dataset.range === id));
    this.loadHistory();
  }

  // Refills the window from /api/v1/history, one request per GPU.
  async loadHistory() {
    const token = ++this.loading_token;
    const range = this.range;
    const step = stepFor(range.seconds, this.interval);
    const to = this.last_snapshot && this.last_snapshot.time != null ? this.last_snapshot.time : Date.now() / 1000;
    const from = to - range.seconds;
    this.pending = this.pending || [];
    this.status.textContent = `loading ${range.label}\u2026`;
    const failures = [];
    const responses = await Promise.all(this.devices.map((d) =>
      getJson('history', { device: d.index, fields: kHistoryFields, from: Math.floor(from), to: Math.ceil(to), step })
        .then((r) => ({ ...r, device: d.index }))
        .catch((e) => {
          failures.push(`GPU ${d.index}: ${e.message}`);
          return null;
        })));
    if (token !== this.loading_token) return; // a newer range was picked meanwhile
    this.store.reset(range.seconds, step, this.interval);
    this.store.loadHistory(responses.filter(Boolean));
    const pending = this.pending || [];
    this.pending = null;
    for (const s of pending) this.store.addSnapshot(s);
    const tier = responses.find((r) => r && r.tier);
    this.status.textContent = failures.length
      ? `history unavailable (${failures[0]}${failures.length > 1 ? `, +${failures.length - 1} more` : ''})`
      : `${formatDuration(step)} per point${tier ? ` \u00b7 ${tier.tier}` : ''}`;
    this.status.classList.toggle('gw-error-text', failures.length > 0);
    this.loaded = true;
    this.build();
  }

  // Series for one metric in the current selection: [{ label, values, color, reference?,
  // constant? }]. Reference lines (a GPU's total memory or power limit, the thresholds) are
  // constant series, dashed, left out of tooltips and counts; their value is read again at
  // each redraw (constant()).
  seriesFor(metric) {
    const shown = this.selected === 'all' ? this.devices : this.devices.filter((d) => d.index === this.selected);
    const colors = this.colors || readGpuColors();
    const series = shown.map((d) => ({
      label: `GPU ${d.index}`,
      title: `GPU ${d.index} \u00b7 ${d.name}`,
      values: this.store.column(d.index)[metric.id],
      color: gpuColor(colors, d.index),
      dash: gpuDash(d.index),
    }));
    const refOf = (gpu) => (this.store.references.get(gpu) || {})[metric.id];
    if (this.selected !== 'all' && metric.reference && shown.length && refOf(shown[0].index) != null) {
      const gpu = shown[0].index;
      series.push({ label: metric.referenceLabel, constant: () => refOf(gpu), color: gpuColor(colors, gpu), dash: [6, 4], width: 1, reference: true });
    }
    const threshold = this.threshold_color || readThresholdColor();
    if (metric.id === 'temperature') {
      const t = kThresholds.temperatureC;
      series.push({ label: `${t.value} \u00b0C`, title: `${t.rule} fires above ${t.value} \u00b0C (built-in default)`, constant: () => t.value, color: threshold, dash: [3, 3], width: 1, reference: true, threshold: true });
    }
    if (metric.id === 'memory') {
      // 90 % of each distinct total among the GPUs shown.
      const m = kThresholds.memoryRatio;
      const totals = [...new Set(shown.map((d) => refOf(d.index)).filter((v) => v != null))].sort((a, b) => b - a);
      for (const total of totals) {
        series.push({ label: `${Math.round(m.value * 100)} % of ${total.toFixed(0)} GiB`, title: `${m.rule} fires above ${Math.round(m.value * 100)} % of the memory (built-in default)`, constant: () => total * m.value, color: threshold, dash: [3, 3], width: 1, reference: true, threshold: true });
      }
    }
    for (const x of series) if (x.constant) x.values = this.referenceValues(x.constant());
    return series;
  }

  // The largest total memory (or power limit) of the GPUs shown; null when none is known.
  ceiling(metric) {
    const shown = this.selected === 'all' ? this.devices : this.devices.filter((d) => d.index === this.selected);
    const refs = shown.map((d) => (this.store.references.get(d.index) || {})[metric.id]).filter((v) => v != null);
    return refs.length ? Math.max(...refs) : null;
  }

  referenceValues(value) {
    return new Array(this.store.t.length).fill(value);
  }

  // (Re)creates the charts: after a change of GPU, range, devices or colour scheme.
  build(theme) {
    if (theme) {
      this.theme = theme;
      this.colors = readGpuColors();
      this.threshold_color = readThresholdColor();
    }
    if (!this.theme || !this.root.isConnected) return;
    this.needs_build = false;
    this.dirty = false;
    this.destroy();
    clear(this.grid);
    this.group = new ChartGroup(this.store.xRange());
    this.tips = { cursor: new FloatingTip('gw-tip-cursor'), annotation: new FloatingTip('gw-tip-annotation') };
    const hosts = kMetrics.map((metric) => {
      const host = el('div', { class: 'gw-plot' });
      this.grid.appendChild(el('section', { class: 'gw-card gw-chart', id: `gw-chart-${metric.id}`, 'data-chart-id': metric.id },
        el('div', { class: 'gw-card-head' }, el('h3', null, metric.title), el('span', { class: 'gw-unit' }, metric.unit)),
        host));
      return host;
    });
    const width = this.plotWidth();
    this.charts = kMetrics.map((metric, i) => {
      const series = this.seriesFor(metric);
      const spec = { id: metric.id, title: metric.title, unit: metric.unit, yRange: yRangeOf(metric.id, () => this.ceiling(metric)), series };
      const u = makeTimeChart(hosts[i], this.store.t, {
        spec, width, height: kChartHeight, theme: this.theme, group: this.group, tips: this.tips,
        annotations: [], start: null, zoom: false, xRange: () => this.store.xRange(),
      });
      return { metric, u, series };
    });
    this.stop_observing = observeWidth(this.grid, () => this.group.setWidth(this.plotWidth()));
  }

  // New data in the same charts.
  redraw() {
    if (!this.charts.length) {
      this.build();
      return;
    }
    for (const c of this.charts) {
      const data = [this.store.t];
      for (const s of c.series) {
        if (s.constant) s.values = this.referenceValues(s.constant());
        data.push(s.values);
      }
      c.u.setData(data);
    }
  }

  plotWidth() {
    const host = this.grid.querySelector('.gw-plot');
    return Math.max(280, Math.floor((host || this.grid).clientWidth));
  }

  get loading() {
    return this.pending != null;
  }

  // For the test hook: [{ id, points, nonNull, yMin, yMax, thresholds: [{ label, value }],
  // colors: [GPU series colours] }] (reference lines not counted in nonNull).
  summary() {
    return kMetrics.map((metric) => {
      const chart = this.charts.find((c) => c.metric === metric);
      const series = chart ? chart.series : this.seriesFor(metric);
      let nonNull = 0;
      for (const s of series) if (!s.reference) for (const v of s.values) if (v != null) nonNull++;
      const y = chart ? chart.u.scales.y : {};
      return {
        id: metric.id,
        points: this.store.t.length,
        nonNull,
        yMin: y.min ?? null,
        yMax: y.max ?? null,
        thresholds: series.filter((s) => s.threshold).map((s) => ({ label: s.label, value: s.constant() })),
        colors: series.filter((s) => !s.reference).map((s) => s.color),
        labels: series.filter((s) => !s.reference).map((s) => s.label),
      };
    });
  }

  destroy() {
    if (this.stop_observing) this.stop_observing();
    this.stop_observing = null;
    if (this.group) this.group.destroy();
    this.group = null;
    this.charts = [];
    if (this.tips) {
      this.tips.cursor.destroy();
      this.tips.annotation.destroy();
    }
    this.tips = null;
  }
}
