// Turns API JSON (gpuwatch.api/1) into the values the page shows. Pure functions, tolerant of
// missing keys: a value that is absent stays null (shown as N/A), never 0.

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

// {"key": "not_supported"} or {"key": {"reason": "not_supported", ...}} -> {key: "not supported"}
function unavailableReasons(raw) {
  const out = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const key of Object.keys(raw)) {
    const v = raw[key];
    const reason = typeof v === 'string' ? v : v && v.reason ? v.reason : 'unavailable';
    out[key] = reason.replace(/_/g, ' ');
  }
  return out;
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
    slurm: str(p.slurm_job_id),
    memory: num(pick(f, 'process_used_memory_bytes', 'used_memory_bytes')),
    sm: num(pick(f, 'process_sm_utilization_ratio', 'sm_utilization_ratio')),
    cpu: num(pick(f, 'process_cpu_ratio', 'cpu_ratio')),
    rss: num(pick(f, 'process_rss_bytes', 'rss_bytes')),
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
      pid: num(l.pid),
      rate: num(l.rate_bytes_per_second),
      timeToOom: num(l.time_to_oom_seconds),
      message: str(l.message),
    })),
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
