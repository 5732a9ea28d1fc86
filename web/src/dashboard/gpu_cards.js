// One card per GPU: name, status (worst of health, alerts, leaks, forecasts, diagnoses: model.js
// deviceStatus, its reasons on hover), memory bar (processes / other / free), the processes
// holding most memory, MIG instances, framework memory, utilization, temperature, power against
// its limit, SM clock, throttle reasons, why a value is N/A, and the alerts and leaks on that GPU.
// Built once per device; each snapshot only changes text and widths that differ (no re-render).

import { el, clear } from '../lib/dom.js';
import { formatBytes, formatPercent, formatValue, formatByteRate, formatDuration, kNone } from '../lib/format.js';
import { decodeClockReasons, kUrgentOomSeconds, naReason, statusTitle, topHolders } from './model.js';
import { gpuColorVar } from '../lib/gpu_palette.js';

// Holders listed on a card; the rest are counted.
const kHolders = 3;

export const kNotAvailable = 'N/A';

// Sets text (and title) only when they change: most values repeat from one second to the next.
export function setText(node, text, title) {
  if (node.textContent !== text) node.textContent = text;
  const t = title || '';
  if (node.title !== t) node.title = t;
}

function setWidth(node, fraction) {
  const w = `${(Math.max(0, Math.min(1, fraction || 0)) * 100).toFixed(1)}%`;
  if (node.style.width !== w) node.style.width = w;
}

function setClass(node, name, on) {
  if (node.classList.contains(name) !== !!on) node.classList.toggle(name, !!on);
}

// The text of one device field, or N/A with the reason as a hover title.
function fieldText(device, key, format) {
  const v = device.fields[key];
  if (v == null || (typeof v === 'number' && !isFinite(v))) {
    return { text: kNotAvailable, title: `N/A: ${naReason(device, key)}`, value: null, reason: naReason(device, key) };
  }
  return { text: format(v), title: '', value: v };
}

// "team-a/train-7f9c", "e8e4c437cd61", "pod 3f1c9a2e", "slurm 88123" or "".
function containerShort(p) {
  if (p.podName) return `${p.namespace}/${p.podName}`;
  if (p.container) return p.container.slice(0, 12);
  if (p.pod) return `pod ${p.pod.slice(0, 8)}`;
  if (p.slurm) return `slurm ${p.slurm}`;
  return '';
}

// "3g.40gb" from "NVIDIA A100-SXM4-80GB MIG 3g.40gb".
const migProfile = (name) => (/\bMIG\s+(\S+)/.exec(name) || [null, name || 'MIG'])[1];

const num = (v) => (typeof v === 'number' && isFinite(v) ? v : null);
const formatGiB = (v) => `${(v / 1024 ** 3).toFixed(1)} GiB`;
const formatHz = (v) => (v >= 1e9 ? `${(v / 1e9).toFixed(2)} GHz` : `${Math.round(v / 1e6)} MHz`);

class GpuCard {
  constructor(device) {
    this.index = device.index;
    const stat = (label, extra) => {
      const value = el('span', { class: 'gw-stat-value' });
      const bar = extra ? el('span', { class: 'gw-minibar-fill' }) : null;
      const node = el('div', { class: 'gw-stat' },
        el('span', { class: 'gw-stat-label' }, label), value,
        bar ? el('span', { class: 'gw-minibar' }, bar) : null);
      return { node, value, bar };
    };
    this.name = el('span', { class: 'gw-gpu-name' });
    this.health = el('span', { class: 'gw-health', tabindex: '0' });
    this.pstate = el('span', { class: 'gw-pstate gw-muted' });
    this.mem_text = el('span', { class: 'gw-mem-total' });
    this.seg_proc = el('span', { class: 'gw-seg gw-seg-proc' });
    this.seg_other = el('span', { class: 'gw-seg gw-seg-other' });
    this.mem_legend = {
      proc: el('span', { class: 'gw-legend-value' }),
      other: el('span', { class: 'gw-legend-value' }),
      free: el('span', { class: 'gw-legend-value' }),
    };
    this.framework = el('div', { class: 'gw-framework' });
    this.holders = el('ol', { class: 'gw-holders', 'aria-label': 'processes holding most memory' });
    this.holders_key = null;
    this.mig = el('ul', { class: 'gw-mig', 'aria-label': 'MIG instances', hidden: true });
    this.mig_key = null;
    this.na_note = el('div', { class: 'gw-na-note', hidden: true });
    this.util = stat('Util', true);
    this.mem_util = stat('Mem util', true);
    this.temp = stat('Temp', true);
    this.power = stat('Power', true);
    this.clock = stat('SM clock');
    this.clock.node.classList.add('gw-stat-inline');
    this.throttle = el('span', { class: 'gw-throttle-words' });
    this.throttle_row = el('div', { class: 'gw-throttle' }, this.clock.node, el('span', { class: 'gw-stat-label' }, 'held back by'), this.throttle);
    this.alerts = el('ul', { class: 'gw-card-alerts' });
    this.lost_note = el('div', { class: 'gw-lost-note', hidden: true });
    this.root = el('article', { class: 'gw-card gw-gpu', 'data-gpu': device.index, 'aria-label': `GPU ${device.index}` },
      el('header', { class: 'gw-gpu-head' },
        el('span', { class: 'gw-gpu-index', style: `--gpu-color:${gpuColorVar(device.index)}` }, `GPU ${device.index}`),
        this.name, this.pstate, this.health),
      this.lost_note,
      el('div', { class: 'gw-mem' },
        el('div', { class: 'gw-mem-head' }, el('span', { class: 'gw-stat-label' }, 'Memory'), this.mem_text),
        el('div', { class: 'gw-membar', role: 'img', 'aria-label': 'memory use' }, this.seg_proc, this.seg_other),
        el('div', { class: 'gw-mem-legend' },
          el('span', null, el('i', { class: 'gw-key gw-seg-proc' }), 'processes ', this.mem_legend.proc),
          el('span', null, el('i', { class: 'gw-key gw-seg-other' }), 'other ', this.mem_legend.other),
          el('span', null, el('i', { class: 'gw-key gw-seg-free' }), 'free ', this.mem_legend.free)),
        this.framework),
      this.holders,
      this.mig,
      el('div', { class: 'gw-stats' }, this.util.node, this.mem_util.node, this.temp.node, this.power.node),
      this.throttle_row,
      this.na_note,
      this.alerts);
    this.alert_key = null;
  }

  // status: model.js deviceStatus for this device.
  update(device, alerts, leaks, reasonNames, status) {
    const lost = device.health === 'lost';
    const bad = device.health !== 'ok';
    setClass(this.root, 'gw-lost', lost);
    setClass(this.root, 'gw-error', bad && !lost);
    setText(this.name, device.name, device.uuid);
    // The health of a GPU that does not answer is said even when something worse is.
    const health = device.health.toUpperCase();
    const label = bad && status.label !== health ? `${status.label} \u00b7 ${health}` : status.label;
    setText(this.health, label, statusTitle(status));
    const cls = `gw-health gw-status-${status.level}`;
    if (this.health.className !== cls) this.health.className = cls;
    if (this.root.dataset.status !== status.level) this.root.dataset.status = status.level;
    const pstate = device.fields.performance_state;
    setText(this.pstate, pstate == null ? '' : typeof pstate === 'number' ? `P${pstate}` : String(pstate), 'performance state');
    this.lost_note.hidden = !bad;
    if (bad) {
      const stale = device.health === 'stale';
      setText(this.lost_note, lost
        ? 'GPU lost: the driver no longer answers for this GPU. Values below are unavailable until it is back.'
        : stale
          ? `Not answering${device.healthDetail ? `: ${device.healthDetail.split(';')[0]}` : ''}. The values below are the last ones read, not current.`
          : `GPU in error${device.healthDetail ? `: ${device.healthDetail}` : ''}.`);
    }

    this.updateMemory(device);
    this.updateHolders(device);
    this.updateMig(device);
    this.updateStats(device);

    const reasons = decodeClockReasons(device.fields.clock_event_reasons, reasonNames);
    if (reasons == null) setText(this.throttle, kNotAvailable, device.unavailable.clock_event_reasons || 'not reported');
    else setText(this.throttle, reasons.words.length ? reasons.words.join(', ') : 'nothing', `clock event reasons 0x${Number(device.fields.clock_event_reasons).toString(16)}`);
    setClass(this.throttle_row, 'gw-throttled', !!(reasons && reasons.throttled));

    this.updateAlerts(alerts, leaks, status.reasons.filter((r) => r.kind === 'preallocation' || r.kind === 'diagnosis'));
  }

  updateMemory(device) {
    const f = device.fields;
    const total = num(f.memory_total_bytes);
    const used = num(f.memory_used_bytes);
    const reserved = num(f.memory_reserved_bytes);
    const procs = device.processBytes;
    if (total == null || used == null) {
      setText(this.mem_text, kNotAvailable, `N/A: ${naReason(device, device.fields.memory_used_bytes == null ? 'memory_used_bytes' : 'memory_total_bytes')}`);
      setWidth(this.seg_proc, 0);
      setWidth(this.seg_other, 0);
      for (const n of Object.values(this.mem_legend)) setText(n, kNotAvailable);
    } else {
      const procBytes = procs == null ? null : Math.min(procs, used);
      const other = procBytes == null ? used : used - procBytes;
      // Free: what is left for new allocations (the driver's reservation is not free).
      const free = Math.max(0, total - used - (reserved || 0));
      setText(this.mem_text, `${formatGiB(used)} / ${formatGiB(total)}`,
        `used ${formatBytes(used)} of ${formatBytes(total)}${reserved != null ? `; driver reserved ${formatBytes(reserved)}` : ''}`);
      setWidth(this.seg_proc, (procBytes || 0) / total);
      setWidth(this.seg_other, (other + (reserved || 0)) / total);
      setText(this.mem_legend.proc, procBytes == null ? kNotAvailable : formatGiB(procBytes));
      setText(this.mem_legend.other, formatGiB(other + (reserved || 0)), reserved != null ? `includes ${formatBytes(reserved)} reserved by the driver` : '');
      setText(this.mem_legend.free, formatGiB(free));
    }
    // Framework memory: summed per framework over the processes that report it.
    const byFramework = new Map();
    for (const x of device.framework) {
      const agg = byFramework.get(x.framework) || { allocated: null, reserved: null, pids: [] };
      if (x.allocated != null) agg.allocated = (agg.allocated || 0) + x.allocated;
      if (x.reserved != null) agg.reserved = (agg.reserved || 0) + x.reserved;
      agg.pids.push(x.pid);
      byFramework.set(x.framework, agg);
    }
    const text = [...byFramework].map(([name, a]) =>
      `${name}: ${a.allocated == null ? kNotAvailable : formatGiB(a.allocated)} allocated / ${a.reserved == null ? kNotAvailable : formatGiB(a.reserved)} reserved`).join(' \u00b7 ');
    this.framework.hidden = !text;
    setText(this.framework, text, text ? `pid ${[...byFramework.values()].flatMap((a) => a.pids).join(', ')}` : '');
  }

  updateStats(device) {
    const f = device.fields;
    const util = fieldText(device, 'utilization_gpu_ratio', formatPercent);
    setText(this.util.value, util.text, util.title);
    setWidth(this.util.bar, util.value);
    // The spec's key, or the field catalogue's.
    const spec = device.fields.memory_utilization_ratio != null || device.unavailable.memory_utilization_ratio != null;
    const memUtil = fieldText(device, spec || device.fields.utilization_memory_ratio === undefined ? 'memory_utilization_ratio' : 'utilization_memory_ratio', formatPercent);
    setText(this.mem_util.value, memUtil.text, memUtil.title);
    setWidth(this.mem_util.bar, memUtil.value);
    const temp = fieldText(device, 'temperature_gpu_celsius', (v) => formatValue('\u00b0C', v));
    setText(this.temp.value, temp.text, temp.title);
    setWidth(this.temp.bar, temp.value == null ? 0 : temp.value / 100);
    setClass(this.temp.node, 'gw-hot', temp.value != null && temp.value >= 85);

    const draw = fieldText(device, 'power_draw_watts', (v) => formatValue('W', v));
    const limit = num(f.power_limit_watts);
    setText(this.power.value, draw.value == null ? draw.text : `${draw.value.toFixed(0)}${limit == null ? ' W' : `/${limit.toFixed(0)} W`}`,
      [draw.title, limit == null ? `limit: ${device.unavailable.power_limit_watts || 'not reported'}` : `limit ${limit} W`].filter(Boolean).join('; '));
    setWidth(this.power.bar, draw.value != null && limit ? draw.value / limit : 0);
    setClass(this.power.node, 'gw-hot', draw.value != null && limit != null && draw.value >= limit * 0.97);
    const clock = fieldText(device, 'clock_sm_hertz', formatHz);
    setText(this.clock.value, clock.text, clock.title);

    // Why the values shown N/A are: in small text, one line per reason (a lost GPU says it above).
    const byReason = new Map();
    const note = (label, x) => {
      if (x.value != null || !x.reason) return;
      byReason.set(x.reason, [...(byReason.get(x.reason) || []), label]);
    };
    if (device.health !== 'lost') {
      note('Util', util);
      note('Mem util', memUtil);
      note('Temp', temp);
      note('Power', draw);
      if (draw.value != null && limit == null) note('Power limit', { value: null, reason: naReason(device, 'power_limit_watts') });
      note('SM clock', clock);
    }
    const text = [...byReason].map(([reason, labels]) => `${labels.join(', ')} N/A: ${reason}`).join('\n');
    this.na_note.hidden = !text;
    setText(this.na_note, text, text);
  }

  // The top holders of the GPU's memory: user, pid, command, container, memory; "+N more".
  updateHolders(device) {
    const { top, more } = topHolders(device, kHolders);
    const key = JSON.stringify([top.map((p) => [p.pid, p.user, p.command, p.container, p.pod, p.slurm, p.memory == null ? null : Math.round(p.memory / 2 ** 24)]), more]);
    if (key === this.holders_key) return;
    this.holders_key = key;
    clear(this.holders);
    for (const p of top) {
      const where = containerShort(p);
      this.holders.appendChild(el('li', { class: 'gw-holder', 'data-pid': p.pid ?? '' },
        el('span', { class: 'gw-holder-user' }, p.user || kNone),
        el('span', { class: 'gw-holder-pid gw-muted' }, String(p.pid ?? kNone)),
        el('span', { class: 'gw-holder-cmd', title: p.command }, p.command || p.name || kNone),
        el('span', { class: 'gw-holder-where gw-muted', title: [p.container && `container ${p.container}${p.runtime ? ` (${p.runtime})` : ''}`, p.pod && `pod ${p.pod}`, p.slurm && `slurm job ${p.slurm}`].filter(Boolean).join('\n') }, where),
        el('span', { class: 'gw-holder-mem gw-num' }, p.memory == null ? kNotAvailable : formatGiB(p.memory))));
    }
    if (more > 0) this.holders.appendChild(el('li', { class: 'gw-holder-more gw-muted' }, `+${more} more`));
    if (top.length === 0) this.holders.appendChild(el('li', { class: 'gw-holder-none gw-muted' }, device.health === 'lost' ? 'processes unknown' : 'no processes'));
  }

  // MIG instances of a GPU in MIG mode: profile, instance ids, memory, processes.
  updateMig(device) {
    const perInstance = device.processes.some((p) => p.gpuInstance != null);
    const rows = device.mig.map((m) => {
      const procs = perInstance ? device.processes.filter((p) => p.gpuInstance === m.gpuInstance).length : m.processes;
      return { m, procs };
    });
    const key = JSON.stringify(rows.map(({ m, procs }) => [m.migIndex, m.name, m.gpuInstance, m.computeInstance, m.health, m.used == null ? null : Math.round(m.used / 2 ** 24), m.total, procs]));
    if (key === this.mig_key) return;
    this.mig_key = key;
    clear(this.mig);
    this.mig.hidden = rows.length === 0;
    for (const { m, procs } of rows) {
      const fill = el('span', { class: 'gw-seg gw-seg-proc' });
      if (m.used != null && m.total) fill.style.width = `${Math.min(100, (m.used / m.total) * 100).toFixed(1)}%`;
      this.mig.appendChild(el('li', { class: 'gw-mig-row', 'data-mig': m.migIndex,
        title: `${m.name}\nGPU instance ${m.gpuInstance ?? kNone}, compute instance ${m.computeInstance ?? kNone}\n${m.uuid}${m.health !== 'ok' ? `\n${m.health}` : ''}` },
        el('span', { class: 'gw-mig-name' }, `MIG ${m.migIndex} \u00b7 ${migProfile(m.name)}`),
        el('span', { class: 'gw-membar gw-mig-bar' }, fill),
        el('span', { class: 'gw-mig-mem gw-num' }, m.used == null || m.total == null ? kNotAvailable : `${formatGiB(m.used)} / ${formatGiB(m.total)}`),
        el('span', { class: 'gw-mig-procs gw-muted' }, procs == null ? '' : `${procs} process${procs === 1 ? '' : 'es'}`)));
    }
  }

  // notes: the status reasons that are neither alerts nor leaks (pre-allocation, diagnoses).
  updateAlerts(alerts, leaks, notes) {
    // Rebuilt only when the set of messages changes.
    const key = JSON.stringify([alerts.map((a) => [a.severity, a.message]), leaks.map((l) => [l.message, Math.round((l.timeToOom || 0) / 60)]), notes.map((n) => n.text)]);
    if (key === this.alert_key) return;
    this.alert_key = key;
    clear(this.alerts);
    for (const a of alerts) {
      this.alerts.appendChild(el('li', { class: `gw-card-alert gw-sev-${a.severity}`, 'data-rule': a.rule },
        el('span', { class: 'gw-sev-dot' }), el('span', null, a.message || a.rule)));
    }
    for (const l of leaks) {
      const urgent = l.timeToOom != null && l.timeToOom < kUrgentOomSeconds;
      this.alerts.appendChild(el('li', { class: `gw-card-alert gw-sev-${urgent ? 'critical' : 'warning'} gw-leak` },
        el('span', { class: 'gw-sev-dot' }),
        el('span', null, `${l.state === 'oom_forecast' ? 'OOM forecast' : 'Leak'} (${l.scope}${l.pid != null ? ` pid ${l.pid}` : ''}): ${formatByteRate(l.rate)}`,
          l.timeToOom != null ? `, out of memory in ${formatDuration(l.timeToOom)}` : '')));
    }
    for (const n of notes) {
      this.alerts.appendChild(el('li', { class: `gw-card-alert gw-sev-${n.level === 'info' ? 'info' : n.level} gw-card-note`, 'data-kind': n.kind },
        el('span', { class: 'gw-sev-dot' }), el('span', null, n.text)));
    }
    this.alerts.hidden = alerts.length + leaks.length + notes.length === 0;
  }
}

export class GpuCards {
  constructor() {
    this.root = el('section', { class: 'gw-cards', id: 'gw-cards', 'aria-label': 'GPUs' });
    this.cards = new Map();
    this.signature = null;
    this.root.appendChild(el('p', { class: 'gw-nodata gw-connecting' }, 'Connecting to the gpuwatch server\u2026'));
  }

  // statusOf(device) -> model.js deviceStatus.
  update(snapshot, statusOf) {
    const signature = snapshot.devices.map((d) => `${d.index}/${d.uuid}`).join(',');
    if (signature !== this.signature) {
      this.signature = signature;
      clear(this.root);
      this.cards.clear();
      for (const d of snapshot.devices) {
        const card = new GpuCard(d);
        this.cards.set(d.index, card);
        this.root.appendChild(card.root);
      }
      if (snapshot.devices.length === 0) this.root.appendChild(el('p', { class: 'gw-nodata' }, 'No GPUs in this snapshot.'));
    }
    for (const d of snapshot.devices) {
      this.cards.get(d.index).update(d,
        snapshot.alerts.filter((a) => a.gpu === d.index),
        snapshot.leaks.filter((l) => l.gpu === d.index),
        snapshot.reasonNames,
        statusOf(d));
    }
  }

  get count() {
    return this.cards.size;
  }
}
