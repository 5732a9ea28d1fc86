// The static parts of the report: header, DEMO banner, summary, devices, events table,
// run details and footer. Everything is built with textContent (lib/dom.js).

import { el } from '../lib/dom.js';
import {
  formatBytes, formatClock, formatDateTime, formatDuration, formatOffset, formatUtcOffset,
} from '../lib/format.js';

export function demoBanner(data) {
  if (data.demo == null) return null;
  return el('div', { class: 'gw-demo', id: 'gw-demo', role: 'note' },
    el('strong', null, 'DEMO'),
    ` \u2014 simulated data from the demo scenario \u201c${data.demo}\u201d. Nothing here was measured on a real GPU.`);
}

// bucket_seconds 0 means every sample is its own point.
function resolution(bucketSeconds) {
  if (bucketSeconds == null) return null;
  return bucketSeconds > 0 ? `${formatDuration(bucketSeconds)} per point` : 'every sample';
}

export function header(data) {
  const { start, end } = data.range || {};
  const facts = [
    ['Host', data.hostname],
    ['Time', start == null ? null : `${formatDateTime(start)} \u2013 ${formatClock(end)} (${formatDuration(end - start)})`],
    ['Source', data.source],
    ['Resolution', resolution(data.bucket_seconds)],
  ];
  return el('header', { class: 'gw-header' },
    el('h1', null, data.title || 'gpuwatch report'),
    el('dl', { class: 'gw-facts' },
      facts.filter(([, v]) => v != null && v !== '').map(([k, v]) => el('div', null, el('dt', null, k), el('dd', null, v)))));
}

// An environment variable's name: capitals, digits and underscores with at least one
// underscore (CUDA_VISIBLE_DEVICES, GPUWATCH_SOCKET).
const kEnvName = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b/g;

// Text as nodes, each environment variable name in it a span that never breaks (the text
// around it wraps as usual; NAME=value may wrap after the "=").
export function withNames(text) {
  const s = text == null ? '' : String(text);
  const out = [];
  let last = 0;
  kEnvName.lastIndex = 0;
  for (let m = kEnvName.exec(s); m; m = kEnvName.exec(s)) {
    if (m.index > last) out.push(s.slice(last, m.index));
    out.push(el('span', { class: 'gw-env-name' }, m[0]));
    last = m.index + m[0].length;
    if (s[last] === '=') {
      out.push('=', el('wbr')); // NAME=value may wrap before the value
      last++;
    }
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

// A value that may wrap after / , : ; = (a path, a device list), but nowhere else.
function breakable(value) {
  const out = [];
  let part = '';
  for (const c of String(value)) {
    part += c;
    if ('/,:;='.includes(c)) {
      out.push(part, el('wbr'));
      part = '';
    }
  }
  if (part) out.push(part);
  return out;
}

// The summary rows, each its own label and value. A value's first line is the row's fact; the
// lines below it (the C++ side joins continuation rows with "\n": the top processes, each
// alert) are its details, set lighter.
export function summary(data) {
  const rows = (data.summary || []).map(([label, value]) => {
    const [head, ...more] = String(value == null ? '' : value).split('\n');
    return el('div', { class: 'gw-kv', role: 'row' },
      el('span', { class: 'gw-k', role: 'rowheader' }, label),
      el('span', { class: 'gw-v', role: 'cell' }, withNames(head),
        more.map((line) => el('span', { class: 'gw-v-more' }, '\n', withNames(line)))));
  });
  return el('section', { class: 'gw-card gw-summary-card', 'aria-labelledby': 'gw-summary-h' },
    el('h2', { id: 'gw-summary-h' }, 'Summary'),
    rows.length
      ? el('div', { class: 'gw-summary', id: 'gw-summary', role: 'table' }, rows)
      : el('p', { class: 'gw-muted' }, 'No summary.'));
}

export function devices(data, colorOf) {
  const list = data.devices || [];
  return el('section', { class: 'gw-card gw-devices-card', 'aria-labelledby': 'gw-devices-h' },
    el('h2', { id: 'gw-devices-h' }, list.length === 1 ? 'GPU' : `GPUs (${list.length})`),
    el('table', { class: 'gw-table gw-devices' },
      el('tbody', null, list.map((d) =>
        el('tr', { title: d.uuid || null },
          el('td', null, el('span', { class: 'gw-swatch', style: `background:${colorOf(d.index)}` }), ` GPU ${d.index}`),
          el('td', null, d.name || '?'),
          el('td', { class: 'gw-num' }, formatBytes(d.memory_total_bytes)))))));
}

// What gpuwatch put in the job's environment (the run's JSON "environment"); none for a
// recording.
export function environment(data) {
  const env = data.job && data.job.environment;
  const names = env && typeof env === 'object' ? Object.keys(env).sort() : [];
  if (names.length === 0) return null;
  return el('section', { class: 'gw-card gw-env-card', 'aria-labelledby': 'gw-env-h' },
    el('h2', { id: 'gw-env-h' }, 'Environment set for the job'),
    el('table', { class: 'gw-table gw-env', id: 'gw-env' },
      el('tbody', null, names.map((name) =>
        el('tr', null,
          el('td', { class: 'gw-env-key' }, el('span', { class: 'gw-env-name' }, name)),
          el('td', { class: 'gw-env-value' }, breakable(env[name])))))));
}

const kKindLabels = {
  alert: 'alert', alert_resolved: 'resolved', leak: 'leak', leak_cleared: 'leak cleared',
  oom_forecast: 'OOM forecast', oom_forecast_cleared: 'forecast cleared',
  diagnosis: 'diagnosis', mark: 'mark', process: 'process', device: 'device',
};

// onSelect(annotation, row) is called when a row is clicked or activated with the keyboard.
export function events(data, annotations, onSelect) {
  const start = data.range ? data.range.start : 0;
  const rows = annotations.map((a) => {
    const row = el('tr', { class: `gw-event gw-sev-${a.severity}`, tabindex: 0, title: 'Zoom the charts to this event' },
      el('td', { class: 'gw-nowrap' }, formatClock(a.t), el('span', { class: 'gw-muted' }, ` ${formatOffset(a.t - start)}`)),
      el('td', { class: 'gw-nowrap' }, el('span', { class: 'gw-sev-dot' }), ` ${kKindLabels[a.kind] || a.kind}`),
      el('td', { class: 'gw-nowrap' }, a.gpu == null ? '\u2014' : `GPU ${a.gpu}`),
      el('td', { class: 'gw-event-text' }, withNames(a.text)));
    const select = () => onSelect(a, row);
    row.addEventListener('click', select);
    row.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        select();
      }
    });
    return row;
  });
  const counts = ['critical', 'warning', 'info']
    .map((s) => [s, annotations.filter((a) => a.severity === s).length])
    .filter(([, n]) => n > 0)
    .map(([s, n]) => el('span', { class: `gw-count gw-sev-${s}` }, el('span', { class: 'gw-sev-dot' }), ` ${n} ${s}`));
  return el('section', { class: 'gw-card gw-events-card', 'aria-labelledby': 'gw-events-h' },
    el('div', { class: 'gw-card-head' }, el('h2', { id: 'gw-events-h' }, 'Events'), el('div', { class: 'gw-counts' }, counts)),
    rows.length
      ? el('div', { class: 'gw-scroll' },
        el('table', { class: 'gw-table gw-events', id: 'gw-events' },
          el('thead', null, el('tr', null, el('th', null, 'Time'), el('th', null, 'Kind'), el('th', null, 'GPU'), el('th', null, 'What happened'))),
          el('tbody', null, rows)))
      : el('p', { class: 'gw-muted' }, 'No events were recorded.'));
}

export function jobDetails(data) {
  if (data.job == null) return null;
  return el('details', { class: 'gw-card gw-job' },
    el('summary', null, data.source === 'run' ? 'Run details (JSON)' : 'Summary data (JSON)'),
    el('pre', null, JSON.stringify(data.job, null, 2)));
}

export function footer(data) {
  const start = data.range ? data.range.start : Date.now() / 1000;
  const generated = data.generated ? `Generated ${data.generated} by gpuwatch` : 'Generated by gpuwatch';
  return el('footer', { class: 'gw-footer' },
    `${generated} \u00b7 times in local time (${formatUtcOffset(start)}) \u00b7 each point summarises its time bucket: `
    + 'memory and temperature the maximum, utilization and power the mean.');
}
