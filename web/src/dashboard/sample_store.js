// The charts' data: one shared time axis and, per GPU and metric, a column of values in display
// units (null = no reading). Filled from /api/v1/history, then from each stream snapshot; keeps
// only the visible window, thinned to the window's step, so a chart never holds more than about
// a thousand points. Arrays are changed in place, so uPlot can be handed the same arrays again.

import { kGiB } from '../lib/format.js';

// Chart metrics: field key in the API, display unit, factor from base units.
export const kMetrics = [
  { id: 'memory', title: 'Memory used', field: 'memory_used_bytes', unit: 'GiB', factor: 1 / kGiB, yRange: 'zero', reference: 'memory_total_bytes', referenceLabel: 'total' },
  { id: 'utilization', title: 'GPU utilization', field: 'utilization_gpu_ratio', unit: '%', factor: 100, yRange: 'percent' },
  { id: 'temperature', title: 'Temperature', field: 'temperature_gpu_celsius', unit: '\u00b0C', factor: 1, yRange: 'auto' },
  { id: 'power', title: 'Power', field: 'power_draw_watts', unit: 'W', factor: 1, yRange: 'zero', reference: 'power_limit_watts', referenceLabel: 'limit' },
];

export const kRanges = [
  { id: '5m', label: '5 min', seconds: 300 },
  { id: '1h', label: '1 h', seconds: 3600 },
  { id: '6h', label: '6 h', seconds: 6 * 3600 },
  { id: '24h', label: '24 h', seconds: 86400 },
  { id: '7d', label: '7 d', seconds: 7 * 86400 },
  { id: '30d', label: '30 d', seconds: 30 * 86400 },
];

const kSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
export const kMaxPoints = 1000;

// The smallest round step that keeps a window within kMaxPoints points (and not below the
// sampling interval).
export function stepFor(rangeSeconds, intervalSeconds = 1) {
  const want = Math.max(rangeSeconds / kMaxPoints, intervalSeconds || 1);
  return kSteps.find((s) => s >= want) || kSteps[kSteps.length - 1];
}

const factorOf = (metric, v) => (typeof v === 'number' && isFinite(v) ? v * metric.factor : null);

export class SampleStore {
  constructor() {
    this.reset(300, 1);
  }

  reset(rangeSeconds, step, intervalSeconds = 1) {
    this.range = rangeSeconds;
    this.interval = intervalSeconds;
    this.step = step;
    this.t = [];
    this.columns = new Map(); // gpu index -> { memory: [], utilization: [], ... }
    // gpu index -> { memory: total GiB, power: limit W }, from the latest snapshot; kept across resets.
    this.references = this.references || new Map();
    this.latest = null;
  }

  column(gpu) {
    let c = this.columns.get(gpu);
    if (!c) {
      c = {};
      for (const m of kMetrics) c[m.id] = new Array(this.t.length).fill(null);
      this.columns.set(gpu, c);
    }
    return c;
  }

  get lastTime() {
    return this.t.length ? this.t[this.t.length - 1] : null;
  }

  // Adds one snapshot's values when it is at least one step after the last point. Returns
  // whether a point was added.
  addSnapshot(snapshot) {
    const time = snapshot.time;
    if (time == null) return false;
    for (const d of snapshot.devices) {
      const ref = this.references.get(d.index) || {};
      for (const m of kMetrics) if (m.reference) ref[m.id] = factorOf(m, d.fields[m.reference]) ?? ref[m.id] ?? null;
      this.references.set(d.index, ref);
    }
    this.latest = Math.max(this.latest ?? time, time);
    const last = this.lastTime;
    // Half an interval of slack: sample times jitter.
    if (last != null && time < last + this.step - Math.min(0.5, this.step / 2)) return false;
    for (const d of snapshot.devices) this.column(d.index);
    // A pause in the data (reconnect, server restart) stays a gap: a null row after the last point.
    if (last != null && time - last > 3 * Math.max(this.step, this.interval || 1)) this.pushNulls(last + this.step);
    this.t.push(time);
    const seen = new Set();
    for (const d of snapshot.devices) {
      const c = this.columns.get(d.index);
      for (const m of kMetrics) c[m.id].push(factorOf(m, d.fields[m.field]));
      seen.add(d.index);
    }
    for (const [gpu, c] of this.columns) {
      if (!seen.has(gpu)) for (const m of kMetrics) c[m.id].push(null);
    }
    this.trim();
    return true;
  }

  pushNulls(time) {
    this.t.push(time);
    for (const c of this.columns.values()) for (const m of kMetrics) c[m.id].push(null);
  }

  // responses: [{ device, t, fields: { key: { avg } } }] for the window; replaces the data.
  // Times closer than the step (a server that answers every sample) are thinned to one per step.
  loadHistory(responses) {
    const times = new Set();
    for (const r of responses) for (const x of r.t || []) times.add(x);
    this.t.length = 0;
    const position = new Map();
    for (const x of [...times].sort((a, b) => a - b)) {
      const last = this.lastTime;
      if (last != null && x < last + this.step - Math.min(0.5, this.step / 2)) continue;
      position.set(x, this.t.length);
      this.t.push(x);
    }
    this.columns.clear();
    for (const r of responses) {
      const c = this.column(r.device);
      for (const m of kMetrics) {
        const series = r.fields && r.fields[m.field];
        const avg = series && (series.avg || (Array.isArray(series) ? series : null));
        if (!avg) continue;
        (r.t || []).forEach((x, i) => {
          const at = position.get(x);
          if (at != null) c[m.id][at] = factorOf(m, avg[i]);
        });
      }
    }
    if (this.t.length) this.latest = Math.max(this.latest ?? this.lastTime, this.lastTime);
    this.trim();
  }

  // Drops points that have left the window [latest - range, latest].
  trim() {
    if (this.latest == null) return;
    const from = this.latest - this.range;
    let n = 0;
    while (n < this.t.length && this.t[n] < from) n++;
    if (n === 0) return;
    this.t.splice(0, n);
    for (const c of this.columns.values()) for (const m of kMetrics) c[m.id].splice(0, n);
  }

  xRange() {
    const end = this.latest ?? Date.now() / 1000;
    return [end - this.range, end];
  }
}
