// Turns the report data (schema gpuwatch.report/1) into chart specs for lib/time_chart.js.
// Pure: no DOM. Chart ids are stable; the browser check names them in --expect-empty.

import { kGiB, ellipsize, formatBytes } from '../lib/format.js';
import { processStyle } from '../lib/palette.js';
import { gpuColor, gpuDash } from '../lib/gpu_palette.js';

const kNeutral = '#8c959f';

export const kChartIds = ['memory-gpu', 'memory-process', 'utilization', 'power', 'temperature'];

function toGiB(values) {
  const out = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out[i] = v == null ? null : v / kGiB;
  }
  return out;
}

// Copies with non-numbers turned into null, so a bad value is a gap, not a crash.
function clean(values, length) {
  const out = new Array(length);
  for (let i = 0; i < length; i++) {
    const v = values ? values[i] : null;
    out[i] = typeof v === 'number' && isFinite(v) ? v : null;
  }
  return out;
}

export function countNonNull(series) {
  let n = 0;
  for (const s of series) {
    if (s.reference) continue;
    for (const v of s.values) if (v != null) n++;
  }
  return n;
}

function deviceLabel(index, devices) {
  const d = devices.find((x) => x.index === index);
  return d ? `GPU ${index}` : `GPU ${index} (unknown)`;
}

// Colour of a device by its index, from the page's GPU colours (lib/gpu_palette.js
// readGpuColors): GPU n has one colour on every chart, and the one the live dashboard gives it.
export function deviceColorFn(colors) {
  return (index) => gpuColor(colors, index);
}

function deviceChart(data, id, title, unit, yRange, field, scale) {
  const n = data.t.length;
  const color = deviceColorFn(data.gpuColors);
  const series = (data.device_series || []).map((d) => {
    const values = clean(d[field], n);
    return {
      label: deviceLabel(d.index, data.devices),
      values: scale ? scale(values) : values,
      color: color(d.index),
      dash: gpuDash(d.index),
      gpu: d.index,
      kind: 'gpu',
    };
  });
  return { id, title, unit, yRange, series };
}

// Each device's total memory as a dashed reference line; one grey line when all are equal.
function memoryPerGpu(data) {
  const spec = deviceChart(data, 'memory-gpu', 'Memory per GPU', 'GiB', 'zero', 'memory_used_bytes', toGiB);
  const n = data.t.length;
  const color = deviceColorFn(data.gpuColors);
  const devices = (data.devices || []).filter((d) => d.memory_total_bytes != null);
  const reference = (label, title, total, lineColor, gpu) => ({
    label, title, values: new Array(n).fill(total / kGiB), color: lineColor, dash: [6, 4], width: 1, reference: true, gpu, kind: 'reference',
  });
  const totals = new Set(devices.map((d) => d.memory_total_bytes));
  if (devices.length > 1 && totals.size === 1) {
    const total = devices[0].memory_total_bytes;
    spec.series.push(reference('total per GPU', `every GPU has ${formatBytes(total)}`, total, kNeutral));
  } else {
    for (const d of devices) {
      spec.series.push(reference(`GPU ${d.index} total`, `GPU ${d.index} ${d.name || ''}: ${formatBytes(d.memory_total_bytes)} total`,
        d.memory_total_bytes, color(d.index), d.index));
    }
  }
  return spec;
}

// Job processes first. A process is drawn in a shade of its GPU's colour (palette.js
// processStyle), never in another GPU's; its legend entry names GPU, pid, user and command.
// Framework series are dotted / dashed in their GPU's colour, which is also the colour of the
// first (job) process on that GPU, so "torch allocated" sits next to the memory NVML counts
// for that process.
function memoryPerProcess(data) {
  const n = data.t.length;
  const color = deviceColorFn(data.gpuColors);
  const processes = (data.process_series || [])
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (b.p.job ? 1 : 0) - (a.p.job ? 1 : 0) || a.i - b.i)
    .map((x) => x.p);
  const onGpu = new Map();
  const series = processes.map((p) => {
    const k = onGpu.get(p.gpu) || 0;
    onGpu.set(p.gpu, k + 1);
    const style = processStyle(color(p.gpu), k);
    const who = p.user ? ` ${p.user}` : '';
    return {
      label: `GPU ${p.gpu} \u00b7 pid ${p.pid}${who} ${ellipsize(p.command || '?', 40)}`,
      title: `GPU ${p.gpu} \u00b7 pid ${p.pid}${p.user ? ` (${p.user})` : ''}${p.job ? ' \u00b7 this job' : ''}\n${p.command || ''}`,
      values: toGiB(clean(p.memory_bytes, n)),
      color: style.color,
      dash: style.dash || undefined,
      width: p.job ? 1.75 : 1.25,
      gpu: p.gpu,
      kind: 'process',
      pid: p.pid,
    };
  });
  const dashes = { allocated: [2, 3], reserved: [7, 4] };
  for (const f of data.framework_series || []) {
    series.push({
      label: `GPU ${f.gpu} \u00b7 ${f.framework} ${f.kind}`,
      title: `${f.framework} ${f.kind} on GPU ${f.gpu}, as the framework reports it`,
      values: toGiB(clean(f.memory_bytes, n)),
      color: color(f.gpu),
      dash: dashes[f.kind] || [4, 4],
      width: 1.5,
      gpu: f.gpu,
      kind: 'framework',
    });
  }
  return { id: 'memory-process', title: 'Memory per process', unit: 'GiB', yRange: 'zero', series };
}

export function buildChartSpecs(data) {
  const specs = [
    memoryPerGpu(data),
    memoryPerProcess(data),
    deviceChart(data, 'utilization', 'Utilization', '%', 'percent', 'utilization_percent'),
    deviceChart(data, 'power', 'Power', 'W', 'zero', 'power_watts'),
    deviceChart(data, 'temperature', 'Temperature', '\u00b0C', 'auto', 'temperature_celsius'),
  ];
  for (const spec of specs) {
    spec.nonNull = countNonNull(spec.series);
    spec.dataSeries = spec.series.filter((s) => !s.reference).length;
    for (const s of spec.series) {
      if (!s.reference && !s.values.some((v) => v != null)) s.label += ' (no data)';
    }
  }
  return specs;
}
