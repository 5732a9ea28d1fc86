// Turns API JSON (gpuwatch.api/1) into the values the page shows. Pure functions, tolerant of
// missing keys: a value that is absent stays null (shown as N/A), never 0. Also the one place a
// GPU card's status is decided (deviceStatus) from everything the snapshot says about the GPU.

import { formatByteRate, formatDuration } from '../lib/format.js';
import { kStarved, kThresholds } from './thresholds.js';

// Unix seconds from a number or an ISO 8601 string; null otherwise.
export function toUnixSeconds(value) {
  if (typeof value === 'number' && isFinite(value)) return value;
  if (typeof value === 'string' && value) {
    const ms = Date.parse(value);
    if (isFinite(ms)) return ms / 1000;
  }
  return null;
}

const num = (v) => (typeof v === 'number' && isFinite(v) ? v : null);
const str = (v) => (v == null ? '' : String(v));

// A field of a fields object under its first present key (process fields are named
// process_used_memory_bytes in the API; used_memory_bytes in the snapshot JSON).
function pick(fields, ...keys) {
  if (!fields) return null;
  for (const k of keys) if (fields[k] != null) return fields[k];
  return null;
}

// {"key": "not_supported"} or {"key": {"reason": "not_supported", "detail": "nvmlX: Not
// Supported"}} -> {key: "not supported \u2014 nvmlX: Not Supported"}
function unavailableReasons(raw) {
  const out = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const key of Object.keys(raw)) {
    const v = raw[key];
    const reason = typeof v === 'string' ? v : v && v.reason ? String(v.reason) : 'unavailable';
    const detail = v && typeof v === 'object' && v.detail ? String(v.detail) : '';
    out[key] = `${reason.replace(/_/g, ' ')}${detail ? ` \u2014 ${detail}` : ''}`;
  }
  return out;
}

// Fields NVML does not report for a GPU in MIG mode, nor for its MIG devices.
const kNotPerMig = new Set(['utilization_gpu_ratio', 'memory_utilization_ratio', 'utilization_memory_ratio',
  'utilization_gpu_mean_ratio', 'process_sm_utilization_ratio', 'sm_utilization_ratio']);

// Why a device's field has no value, in words: the snapshot's `unavailable` reason (with the
// driver call that said so), explained for a GPU in MIG mode; the health of a GPU that does not
// answer; else "not reported".
export function naReason(device, key) {
  const reason = device.unavailable[key];
  if (device.migMode === 1 && kNotPerMig.has(key)) {
    return `not reported per MIG device by NVML (GPU in MIG mode${reason ? `; ${reason}` : ''})`;
  }
  if (reason) return reason;
  if (device.health !== 'ok') return `device ${device.health}`;
  return 'not reported';
}

function normaliseProcess(p, gpu) {
  const f = p.fields || {};
  return {
    key: `${gpu}:${p.pid}`,
    gpu,
    pid: num(p.pid),
    name: str(p.name),
    command: str(p.command || p.name),
    user: str(p.user),
    container: str(p.container_id),
    runtime: str(p.container_runtime),
    pod: str(p.pod_uid),
    // Kubernetes names (the kubelet's), '' off Kubernetes.
    podName: str(p.pod),
    namespace: str(p.namespace),
    containerName: str(p.container),
    slurm: str(p.slurm_job_id),
    gpuInstance: num(p.gpu_instance_id),
    memory: num(pick(f, 'process_used_memory_bytes', 'used_memory_bytes')),
    sm: num(pick(f, 'process_sm_utilization_ratio', 'sm_utilization_ratio')),
    cpu: num(pick(f, 'process_cpu_ratio', 'cpu_ratio')),
    rss: num(pick(f, 'process_rss_bytes', 'rss_bytes')),
  };
}

// A MIG device (an instance of a GPU in MIG mode): its memory and processes.
function normaliseMig(m, k) {
  const f = m.fields || {};
  return {
    migIndex: num(m.mig_index) ?? k,
    name: str(m.name || f.name),
    uuid: str(m.uuid || f.uuid),
    gpuInstance: num(m.gpu_instance_id),
    computeInstance: num(m.compute_instance_id),
    health: str(m.health) || 'ok',
    used: num(f.memory_used_bytes),
    total: num(f.memory_total_bytes),
    processes: Array.isArray(m.processes) ? m.processes.length : null,
  };
}

function normaliseDevice(d, i) {
  const index = num(d.index) ?? i;
  const f = d.fields || {};
  const processes = (d.processes || []).map((p) => normaliseProcess(p, index));
  // An empty process list is a reading (nothing runs there): 0 bytes, unlike a missing list.
  let processBytes = Array.isArray(d.processes) && processes.length === 0 ? 0 : null;
  for (const p of processes) if (p.memory != null) processBytes = (processBytes || 0) + p.memory;
  return {
    index,
    migMode: num(f.mig_mode),
    mig: (d.mig_devices || []).map((m, k) => normaliseMig(m, k)),
    uuid: str(d.uuid || f.uuid),
    name: str(d.name || f.name) || `GPU ${index}`,
    health: str(d.health) || 'ok',
    healthDetail: str(d.health_detail),
    fields: f,
    unavailable: unavailableReasons(d.unavailable),
    processes,
    processBytes,
    framework: (d.framework || []).map((x) => ({
      pid: num(x.pid),
      framework: str(x.framework) || 'framework',
      allocated: num(x.bytes && x.bytes.allocated),
      reserved: num(x.bytes && x.bytes.reserved),
    })),
  };
}

export function normaliseSnapshot(raw) {
  const devices = (raw.devices || []).map(normaliseDevice);
  const host = raw.host || {};
  const hostFields = host.fields || host;
  return {
    time: toUnixSeconds(raw.time),
    sequence: num(raw.sequence),
    stale: raw.stale === true,
    demo: raw.demo === true,
    hostname: str(raw.hostname),
    interval: num(raw.interval_seconds) || 1,
    driver: str(hostFields.driver_version),
    cuda: str(hostFields.cuda_version || hostFields.cuda_driver_version),
    devices,
    processes: devices.flatMap((d) => d.processes),
    alerts: (raw.alerts || []).map((a) => ({
      rule: str(a.rule),
      severity: normaliseSeverity(a.severity),
      gpu: num(a.gpu),
      message: str(a.message),
      since: toUnixSeconds(a.since),
    })),
    leaks: (raw.leaks || []).map((l) => ({
      gpu: num(l.gpu),
      scope: str(l.scope) || 'device',
      state: l.state === 'oom_forecast' ? 'oom_forecast' : 'leak',
      pid: num(l.pid),
      rate: num(l.rate_bytes_per_second),
      timeToOom: num(l.time_to_oom_seconds),
      message: str(l.message),
    })),
    // Diagnoses that stand now: {gpu, kind, severity, message, since, pid}.
    diagnoses: (raw.diagnoses || []).map((x) => ({
      gpu: num(x.gpu),
      kind: str(x.kind),
      severity: normaliseSeverity(x.severity),
      message: str(x.message) || str(x.kind),
      since: toUnixSeconds(x.since),
      pid: num(x.pid),
    })),
    preallocated: (raw.preallocated || []).map((x) => ({ gpu: num(x.gpu), pid: num(x.pid), bytes: num(x.bytes), share: num(x.share) })),
    reasonNames: raw.clock_event_reason_names || null,
  };
}

export function normaliseSeverity(s) {
  return s === 'critical' || s === 'warning' ? s : 'info';
}

export function normaliseEvent(e) {
  return {
    time: toUnixSeconds(e.time),
    kind: str(e.kind) || 'event',
    severity: normaliseSeverity(e.severity),
    source: str(e.source),
    gpu: num(e.gpu),
    pid: num(e.pid),
    message: str(e.message),
  };
}

// NVML's clock event reason bits, for servers that send no names.
const kReasonBits = {
  1: 'gpu_idle', 2: 'applications_clocks_setting', 4: 'sw_power_cap', 8: 'hw_slowdown', 16: 'sync_boost',
  32: 'sw_thermal_slowdown', 64: 'hw_thermal_slowdown', 128: 'hw_power_brake_slowdown', 256: 'display_clock_setting',
};
const kReasonWords = {
  gpu_idle: 'idle',
  applications_clocks_setting: 'application clocks',
  sw_power_cap: 'power cap',
  hw_slowdown: 'HW slowdown',
  sync_boost: 'sync boost',
  sw_thermal_slowdown: 'thermal (SW)',
  hw_thermal_slowdown: 'thermal (HW)',
  hw_power_brake_slowdown: 'power brake',
  display_clock_setting: 'display clocks',
};
// Reasons that mean the GPU is being held back (worth a warning colour); idle is not.
const kThrottling = new Set(['sw_power_cap', 'hw_slowdown', 'sw_thermal_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown']);

// mask (number, or "0x..." string) -> { words: ['power cap', ...], throttled: bool }; null if
// there is no mask. names: the snapshot's clock_event_reason_names (bit value -> name).
export function decodeClockReasons(mask, names) {
  let bits = mask;
  if (typeof bits === 'string') bits = Number(bits.startsWith('0x') ? parseInt(bits, 16) : bits);
  if (typeof bits !== 'number' || !isFinite(bits)) return null;
  const table = names && Object.keys(names).length ? names : kReasonBits;
  const words = [];
  let throttled = false;
  for (const key of Object.keys(table)) {
    const bit = Number(key);
    if (!(bit > 0)) continue;
    // Bits above 2^31 do not fit JS bitwise operators: divide instead.
    if (Math.floor(bits / bit) % 2 !== 1) continue;
    const name = String(table[key]);
    words.push(kReasonWords[name] || name.replace(/_/g, ' '));
    if (kThrottling.has(name)) throttled = true;
  }
  if (words.length === 0 && bits !== 0) words.push(`0x${bits.toString(16)}`);
  return { words, throttled };
}

// A card's status levels, worst last: a lost GPU over a critical alert over a GPU that does not
// answer (its values are old) over warnings over notes.
export const kStatusRank = { ok: 0, info: 1, warning: 2, stale: 3, critical: 4, lost: 5 };
const kStatusLabel = { ok: 'OK', info: 'INFO', warning: 'WARNING', stale: 'STALE', critical: 'CRITICAL', lost: 'LOST' };

// The process that holds memory on a GPU doing little (the diagnoser's starved condition), or null.
function starvedHolder(device) {
  const util = num(device.fields.utilization_gpu_ratio);
  if (util == null || util >= kStarved.utilization) return null;
  return device.processes.find((p) => (p.memory || 0) >= kStarved.minBytes) || null;
}
// A forecast of running out of memory sooner than this is critical.
export const kUrgentOomSeconds = 3600;
const pct = (ratio) => `${Math.round(ratio * 100)} %`;

// The status of one GPU: { level: 'ok'|'info'|'warning'|'stale'|'critical'|'lost', label: 'OK',
// reasons: [{ level, text, kind: 'state'|'preallocation'|'diagnosis' }] (worst first) }. The worst reason wins. From the device's health, the
// active alerts, leaks and out-of-memory forecasts, pre-allocations and diagnoses on it, and its
// clocks, temperature and memory against the thresholds (kThresholds) where no alert says so yet.
// context: { alerts, leaks, preallocated, diagnoses (the standing ones), reasonNames }.
export function deviceStatus(device, context = {}) {
  const reasons = [];
  const add = (level, text, kind = 'state') => reasons.push({ level, text, kind });
  const alerts = context.alerts || [];
  if (device.health === 'lost') add('lost', 'GPU lost: the driver no longer answers for it');
  else if (device.health === 'stale') add('stale', `not answering${device.healthDetail ? `: ${device.healthDetail}` : ''}; its values are the last ones read`);
  else if (device.health !== 'ok') add('critical', `GPU in ${device.health}${device.healthDetail ? `: ${device.healthDetail}` : ''}`);
  for (const a of alerts) add(a.severity, `alert ${a.rule}: ${a.message || a.rule}`);
  for (const l of context.leaks || []) {
    const who = l.scope === 'process' && l.pid != null ? `pid ${l.pid}` : l.scope;
    const oom = l.timeToOom != null ? `, out of memory in ${formatDuration(l.timeToOom)}` : '';
    const urgent = l.timeToOom != null && l.timeToOom < kUrgentOomSeconds;
    add(urgent ? 'critical' : 'warning', `${l.state === 'oom_forecast' ? 'out-of-memory forecast' : 'memory leak suspected'} (${who}): ${formatByteRate(l.rate)}${oom}`);
  }
  for (const x of context.preallocated || []) {
    add('warning', `pid ${x.pid} pre-allocated ${x.share != null ? pct(x.share) : 'most'} of the memory (TensorFlow/JAX style): its real use is unknown`, 'preallocation');
  }
  for (const e of context.diagnoses || []) add(e.severity, `diagnosis ${e.source}: ${e.message}`, 'diagnosis');
  if (device.health === 'ok') {
    const f = device.fields;
    const clocks = decodeClockReasons(f.clock_event_reasons, context.reasonNames);
    if (clocks && clocks.throttled) {
      const heat = clocks.words.some((w) => /thermal|HW slowdown|power brake/.test(w));
      add(heat ? 'warning' : 'info', `clocks held down: ${clocks.words.join(', ')}`);
    }
    const ruled = (rule) => alerts.some((a) => a.rule === rule);
    const holder = starvedHolder(device);
    if (holder && !(context.diagnoses || []).some((e) => e.source === 'starved')) {
      add('info', `utilization ${pct(f.utilization_gpu_ratio)} while pid ${holder.pid} holds ${(holder.memory / 1024 ** 3).toFixed(1)} GiB (starved if it lasts ${kStarved.forSeconds / 60} min)`);
    }
    const temp = num(f.temperature_gpu_celsius);
    if (temp != null && temp > kThresholds.temperatureC.value && !ruled(kThresholds.temperatureC.rule)) {
      add('info', `temperature ${temp} \u00b0C, above the ${kThresholds.temperatureC.value} \u00b0C of ${kThresholds.temperatureC.rule}`);
    }
    const used = num(f.memory_used_bytes);
    const total = num(f.memory_total_bytes);
    if (used != null && total && used / total > kThresholds.memoryRatio.value && !ruled(kThresholds.memoryRatio.rule)) {
      add('info', `memory ${pct(used / total)} used, above the ${pct(kThresholds.memoryRatio.value)} of ${kThresholds.memoryRatio.rule}`);
    }
  }
  reasons.sort((a, b) => kStatusRank[b.level] - kStatusRank[a.level]);
  const level = reasons.length ? reasons[0].level : 'ok';
  return { level, label: kStatusLabel[level], reasons };
}

// The hover text of a status: one line per reason, worst first.
export function statusTitle(status) {
  if (!status.reasons.length) return 'OK: no alert, leak, forecast or diagnosis on this GPU';
  return status.reasons.map((r) => `${kStatusLabel[r.level]}: ${r.text}`).join('\n');
}

// The processes holding most memory on a device: { top: [process], more: how many others }.
export function topHolders(device, n = 3) {
  const sorted = [...device.processes].sort((a, b) => (b.memory ?? -1) - (a.memory ?? -1) || (a.pid ?? 0) - (b.pid ?? 0));
  return { top: sorted.slice(0, n), more: Math.max(0, sorted.length - n) };
}

// The diagnoses that stand on a device now, as { source, severity, message }: the server's
// (the snapshot's `diagnoses`, made and kept by the diagnoser in src/analysis/diagnoses).
function diagnosesOn(device, snapshot) {
  return snapshot.diagnoses.filter((x) => x.gpu === device.index)
    .map((x) => ({ source: x.kind, severity: x.severity, message: x.message }));
}

// Every device's status in a snapshot (normalised), keyed by GPU index.
export function snapshotStatuses(snapshot) {
  const out = new Map();
  for (const d of snapshot.devices) {
    const on = (x) => x.gpu === d.index;
    out.set(d.index, deviceStatus(d, {
      alerts: snapshot.alerts.filter(on),
      leaks: snapshot.leaks.filter(on),
      preallocated: (snapshot.preallocated || []).filter(on),
      diagnoses: diagnosesOn(d, snapshot),
      reasonNames: snapshot.reasonNames,
    }));
  }
  return out;
}
