// Number, size, time and duration formatting shared by the report and the dashboard.
// Pure functions; every value may be null (no reading) and is then shown as an em dash.

export const kGiB = 1024 * 1024 * 1024;
export const kNone = '\u2014';

const kByteUnits = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

// 1536 -> "1.50 KiB"; fixed two decimals above bytes so columns line up.
export function formatBytes(bytes) {
  if (bytes == null || !isFinite(bytes)) return kNone;
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < kByteUnits.length - 1) {
    value /= 1024;
    unit++;
  }
  const sign = bytes < 0 ? '-' : '';
  return unit === 0 ? `${sign}${value} B` : `${sign}${value.toFixed(2)} ${kByteUnits[unit]}`;
}

// Values in the charts are already converted to their display unit.
const kUnitFormatters = {
  GiB: (v) => `${v.toFixed(2)} GiB`,
  '%': (v) => `${v.toFixed(v < 10 && v % 1 !== 0 ? 1 : 0)} %`,
  W: (v) => `${v.toFixed(1)} W`,
  '\u00b0C': (v) => `${v.toFixed(0)} \u00b0C`,
};

export function formatValue(unit, value) {
  if (value == null || !isFinite(value)) return kNone;
  const format = kUnitFormatters[unit];
  return format ? format(value) : `${+value.toFixed(3)} ${unit}`;
}

// Axis tick label: shortest form that still tells ticks apart.
export function formatTick(unit, value, step) {
  if (value == null) return '';
  const decimals = step >= 1 || step === 0 ? 0 : Math.min(3, Math.ceil(-Math.log10(step)));
  const text = value.toFixed(decimals);
  return unit === '%' ? `${text}%` : `${text} ${unit}`;
}

// 600 -> "10 min 0 s", 3725 -> "1 h 2 min", 0.25 -> "0.25 s".
export function formatDuration(seconds) {
  if (seconds == null || !isFinite(seconds)) return kNone;
  const s = Math.abs(seconds);
  if (s < 10) return `${+s.toFixed(2)} s`;
  const total = Math.round(s);
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const secs = total % 60;
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  if (minutes > 0) return `${minutes} min ${secs} s`;
  return `${secs} s`;
}

const pad2 = (n) => String(n).padStart(2, '0');

// Local wall-clock time of a unix timestamp in seconds: "09:10:05".
export function formatClock(unixSeconds) {
  if (unixSeconds == null) return kNone;
  const d = new Date(unixSeconds * 1000);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

// Local date and time: "2026-11-30 09:10:05".
export function formatDateTime(unixSeconds) {
  if (unixSeconds == null) return kNone;
  const d = new Date(unixSeconds * 1000);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${formatClock(unixSeconds)}`;
}

// Offset from the start of a run: "+1:40", "+1:02:03".
export function formatOffset(seconds) {
  if (seconds == null || !isFinite(seconds)) return kNone;
  const sign = seconds < 0 ? '\u2212' : '+';
  const total = Math.round(Math.abs(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${sign}${h}:${pad2(m)}:${pad2(s)}` : `${sign}${m}:${pad2(s)}`;
}

// The browser's UTC offset at that instant: "UTC+01:00".
export function formatUtcOffset(unixSeconds) {
  const minutes = -new Date(unixSeconds * 1000).getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const a = Math.abs(minutes);
  return `UTC${sign}${pad2(Math.floor(a / 60))}:${pad2(a % 60)}`;
}

// Shortens a command line for a legend; the full text goes in a title attribute.
export function ellipsize(text, max) {
  if (text == null) return '';
  return text.length <= max ? text : `${text.slice(0, max - 1)}\u2026`;
}

// A ratio 0..1 as a percentage: 0.953 -> "95 %", 0.004 -> "0.4 %".
export function formatPercent(ratio) {
  if (ratio == null || !isFinite(ratio)) return kNone;
  return formatValue('%', ratio * 100);
}

// A growth rate in bytes per second, per minute where that reads better: "+400 MiB/min".
export function formatByteRate(bytesPerSecond) {
  if (bytesPerSecond == null || !isFinite(bytesPerSecond)) return kNone;
  const sign = bytesPerSecond < 0 ? '\u2212' : '+';
  const perMinute = Math.abs(bytesPerSecond) * 60;
  const text = perMinute < 10 * kGiB ? `${formatBytes(perMinute)}/min` : `${formatBytes(Math.abs(bytesPerSecond))}/s`;
  return sign + text.replace(/\.00 /, ' ');
}

// How long ago, for times in the last days: "12 s ago", "3 min ago", "2 h ago".
export function formatAgo(seconds) {
  if (seconds == null || !isFinite(seconds)) return kNone;
  if (seconds < 1) return 'now';
  if (seconds < 60) return `${Math.floor(seconds)} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}
