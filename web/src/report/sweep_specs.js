// The sweep page's charts from its data (schema gpuwatch.sweep/1, `gpuwatch sweep --json`), as
// specs for sweep_chart.js. Pure: data and colours in, specs out.
//
// memory (batch sweeps): each run's peak process memory, framework allocated / reserved where
//   the job reported them, the fitted curve a + b*bs + c*bs^2, the budget (free memory less the
//   margin), the GPU's total, the runs that ran out of memory (drawn at the total), and marks at
//   the predicted largest batch, the largest value that fit and the smallest that ran out.
// throughput, concurrency-memory (--concurrency): total and per-copy throughput against copies;
//   the device's and the largest copy's memory; a mark at the level the GPU holds.

import { kGiB } from '../lib/format.js';

const kFitPoints = 96;

const gib = (bytes) => (bytes == null ? null : bytes / kGiB);

// The union of xs, ascending, without repeats.
function axis(xs) {
  return [...new Set(xs.filter((x) => x != null && isFinite(x)))].sort((a, b) => a - b);
}

// values at x (null where a series has none).
function at(x, points) {
  const byX = new Map();
  for (const [px, py] of points) if (py != null) byX.set(px, Math.max(py, byX.has(px) ? byX.get(px) : -Infinity));
  return x.map((v) => (byX.has(v) ? byX.get(v) : null));
}

function fitValue(fit, bs) {
  return fit.a_bytes + fit.b_bytes_per_value * bs + (fit.c_bytes_per_value2 || 0) * bs * bs;
}

export function budgetBytes(data) {
  const c = data.largest_fitting;
  if (c && c.budget_bytes != null) return c.budget_bytes;
  return data.free_memory_bytes * (1 - (data.margin || 0));
}

function memorySpec(data, colors) {
  const runs = (data.runs || []).filter((r) => r.copies === 1 || data.mode !== 'concurrency');
  const fits = runs.filter((r) => r.result === 'fits');
  const oom = runs.filter((r) => r.result !== 'fits');
  const first = (r) => (r.per_copy && r.per_copy[0]) || {};
  const c = data.largest_fitting || {};
  const b = data.boundary || {};
  const tried = runs.map((r) => r.value);
  const xMax = Math.max(1, ...tried, c.value || 0, b.smallest_oom || 0) * 1.08;
  const fit = data.fit || null;
  const fitX = fit ? Array.from({ length: kFitPoints + 1 }, (_, i) => Math.round((xMax * i) / kFitPoints)) : [];
  const x = axis([0, ...tried, ...fitX, c.value, b.largest_fit, b.smallest_oom, xMax]);
  const total = gib(data.total_memory_bytes);
  const budget = gib(budgetBytes(data));
  const series = [
    { label: 'process memory', kind: 'measured', color: colors.gpu, points: true,
      values: at(x, fits.map((r) => [r.value, gib(r.peak_process_memory_bytes)])) },
  ];
  const allocated = fits.filter((r) => first(r).framework_allocated_bytes != null);
  if (allocated.length) {
    series.push({ label: 'framework allocated', kind: 'framework', color: colors.allocated, points: true,
      values: at(x, allocated.map((r) => [r.value, gib(first(r).framework_allocated_bytes)])) });
  }
  const reserved = fits.filter((r) => first(r).framework_reserved_bytes != null);
  if (reserved.length) {
    series.push({ label: 'framework reserved', kind: 'framework', color: colors.reserved, points: true,
      values: at(x, reserved.map((r) => [r.value, gib(first(r).framework_reserved_bytes)])) });
  }
  // The fit is of what each run needs (NVML's memory less the cache the framework frees when
  // short of memory) when the job reported it: those points, under the fitted curve.
  if (fit && fit.measure === 'needed') {
    const needed = fits.filter((r) => r.needed_memory_bytes != null);
    series.push({ label: 'needed (less releasable cache)', kind: 'needed', color: colors.fit, points: true,
      values: at(x, needed.map((r) => [r.value, gib(r.needed_memory_bytes)])) });
  }
  if (fit) {
    series.push({ label: `fit (${fit.model || 'linear'})`, kind: 'fit', color: colors.fit, line: true,
      values: x.map((v) => gib(fitValue(fit, v))) });
  }
  series.push({ label: 'budget (free less margin)', kind: 'budget', color: colors.threshold, dash: [6, 4], line: true,
    values: x.map(() => budget) });
  series.push({ label: 'GPU total', kind: 'reference', color: colors.muted, dash: [2, 3], line: true,
    values: x.map(() => total) });
  if (oom.length) {
    series.push({ label: 'out of memory / failed (at the total)', kind: 'oom', color: colors.critical, points: true,
      values: at(x, oom.map((r) => [r.value, total])) });
  }
  const marks = [];
  if (c.value != null) marks.push({ kind: 'predicted', x: c.value, label: `predicted largest ${c.value}`, color: colors.fit });
  if (b.largest_fit != null) marks.push({ kind: 'largest-fit', x: b.largest_fit, label: `fits ${b.largest_fit}`, color: colors.ok, dash: [2, 2] });
  if (b.smallest_oom != null) marks.push({ kind: 'smallest-oom', x: b.smallest_oom, label: `OOM ${b.smallest_oom}`, color: colors.critical, dash: [2, 2] });
  return {
    id: 'sweep-memory', title: 'Memory against batch size', unit: 'GiB', xLabel: 'batch size', xMax, x, series, marks,
    measured: fits.length, oom: oom.length,
  };
}

function concurrencySpecs(data, colors) {
  const runs = data.runs || [];
  const x = axis([0, ...runs.map((r) => r.copies)]);
  const xMax = Math.max(1, ...runs.map((r) => r.copies)) + 0.5;
  const fits = runs.filter((r) => r.result === 'fits');
  const perCopy = (r) => {
    const t = (r.per_copy || []).map((c) => c.throughput_per_s).filter((v) => v != null);
    return t.length ? t.reduce((s, v) => s + v, 0) / t.length : null;
  };
  const holds = data.concurrency && data.concurrency.holds != null ? data.concurrency.holds : null;
  const marks = holds != null ? [{ kind: 'holds', x: holds, label: `holds ${holds}`, color: colors.ok }] : [];
  const failed = runs.filter((r) => r.result !== 'fits');
  const failedMarks = failed.length ? [{ kind: 'smallest-oom', x: failed[0].copies, label: `${failed[0].result} at ${failed[0].copies}`, color: colors.critical }] : [];
  const throughput = {
    id: 'sweep-throughput', title: 'Throughput against copies', unit: '/s', xLabel: 'copies', xMax, x, xWhole: true,
    series: [
      { label: 'total', kind: 'total', color: colors.gpu, points: true, line: true, values: at(x, fits.map((r) => [r.copies, r.total_throughput_per_s])) },
      { label: 'per copy (mean)', kind: 'per-copy', color: colors.allocated, points: true, line: true, values: at(x, fits.map((r) => [r.copies, perCopy(r)])) },
    ],
    marks: [...marks, ...failedMarks],
  };
  const memory = {
    id: 'sweep-concurrency-memory', title: 'Memory against copies', unit: 'GiB', xLabel: 'copies', xMax, x, xWhole: true,
    series: [
      { label: 'device peak', kind: 'device', color: colors.gpu, points: true, line: true, values: at(x, fits.map((r) => [r.copies, gib(r.peak_device_memory_bytes)])) },
      { label: 'largest copy', kind: 'measured', color: colors.allocated, points: true, line: true, values: at(x, fits.map((r) => [r.copies, gib(r.peak_process_memory_bytes)])) },
      { label: 'GPU total', kind: 'reference', color: colors.muted, dash: [2, 3], line: true, values: x.map(() => gib(data.total_memory_bytes)) },
    ],
    marks: [...marks, ...failedMarks],
  };
  return [throughput, memory];
}

// colors: { gpu, allocated, reserved, fit, threshold, muted, critical, ok }.
export function buildSweepSpecs(data, colors) {
  if (data.mode === 'concurrency') return concurrencySpecs(data, colors);
  return [memorySpec(data, colors)];
}
