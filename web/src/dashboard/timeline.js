// The event timeline: alerts, leaks, diagnoses, processes starting and ending, marks, GPUs
// lost and back; newest first. Filled from /api/v1/events, then from the stream; duplicates
// (the same event from both after a reconnect) are dropped. Keeps the newest kMaxEvents.

import { el } from '../lib/dom.js';
import { formatClock, formatDateTime } from '../lib/format.js';

const kMaxEvents = 500;

const kKinds = {
  alert_firing: ['Alert', 'alerts'],
  alert_resolved: ['Resolved', 'alerts'],
  leak_suspected: ['Leak', 'leaks'],
  leak_cleared: ['Leak cleared', 'leaks'],
  leak_updated: ['Leak updated', 'leaks'],
  oom_forecast: ['OOM forecast', 'leaks'],
  oom_forecast_cleared: ['Forecast cleared', 'leaks'],
  diagnosis: ['Diagnosis', 'diagnoses'],
  device_lost: ['GPU lost', 'gpus'],
  device_stale: ['GPU not answering', 'gpus'],
  device_back: ['GPU back', 'gpus'],
  process_started: ['Started', 'processes'],
  process_ended: ['Ended', 'processes'],
  mark: ['Mark', 'marks'],
};
const kFilters = [
  ['all', 'All events'], ['alerts', 'Alerts'], ['leaks', 'Leaks'], ['diagnoses', 'Diagnoses'],
  ['gpus', 'GPU lost/stale/back'], ['processes', 'Processes'], ['marks', 'Marks'], ['important', 'Warnings and critical'],
];

const keyOf = (e) => `${e.time}|${e.kind}|${e.gpu}|${e.pid}|${e.message}`;

export class Timeline {
  constructor() {
    this.events = []; // oldest first
    this.keys = new Set();
    this.filter = 'all';
    this.list = el('ol', { class: 'gw-timeline', reversed: true });
    this.count = el('span', { class: 'gw-muted gw-count' });
    this.select = el('select', { class: 'gw-select', 'aria-label': 'Events shown', onchange: () => this.setFilter(this.select.value) },
      kFilters.map(([v, label]) => el('option', { value: v }, label)));
    this.empty = el('p', { class: 'gw-muted gw-none' }, 'No events yet.');
    this.root = el('section', { class: 'gw-card gw-events', id: 'gw-events', 'aria-labelledby': 'gw-events-h' },
      el('div', { class: 'gw-section-head' }, el('h2', { id: 'gw-events-h' }, 'Events'), this.count, this.select),
      this.empty,
      el('div', { class: 'gw-timeline-scroll' }, this.list));
  }

  // events: normalised, any order. Returns how many were new.
  add(events) {
    const fresh = events.filter((e) => e.time != null && !this.keys.has(keyOf(e)));
    if (fresh.length === 0) return 0;
    fresh.sort((a, b) => a.time - b.time);
    for (const e of fresh) {
      this.keys.add(keyOf(e));
      e.node = this.row(e);
      e.group = (kKinds[e.kind] || [null, 'other'])[1];
      e.node.hidden = !this.shows(e);
    }
    const inOrder = this.events.length === 0 || fresh[0].time >= this.events[this.events.length - 1].time;
    this.events.push(...fresh);
    if (inOrder) {
      // The common case (live events): new rows go on top.
      const frag = document.createDocumentFragment();
      for (let i = fresh.length - 1; i >= 0; i--) frag.appendChild(fresh[i].node);
      this.list.insertBefore(frag, this.list.firstChild);
    } else {
      this.events.sort((a, b) => a.time - b.time);
      const frag = document.createDocumentFragment();
      for (let i = this.events.length - 1; i >= 0; i--) frag.appendChild(this.events[i].node);
      this.list.appendChild(frag);
    }
    while (this.events.length > kMaxEvents) {
      const old = this.events.shift();
      this.keys.delete(keyOf(old));
      old.node.remove();
    }
    this.showCount();
    return fresh.length;
  }

  get latestTime() {
    return this.events.length ? this.events[this.events.length - 1].time : null;
  }

  row(e) {
    const [label] = kKinds[e.kind] || [e.kind.replace(/_/g, ' ')];
    const where = [e.gpu != null ? `GPU ${e.gpu}` : null, e.pid != null ? `pid ${e.pid}` : null].filter(Boolean).join(' \u00b7 ');
    return el('li', { class: `gw-tl gw-sev-${e.severity} gw-kind-${e.kind}`, 'data-kind': e.kind },
      el('time', { class: 'gw-tl-time', datetime: new Date(e.time * 1000).toISOString(), title: formatDateTime(e.time) }, formatClock(e.time)),
      el('span', { class: 'gw-tl-kind' }, el('span', { class: 'gw-sev-dot' }), label),
      el('span', { class: 'gw-tl-where gw-muted' }, where),
      el('span', { class: 'gw-tl-text', title: e.source ? `from ${e.source}` : null }, e.message));
  }

  shows(e) {
    if (this.filter === 'all') return true;
    if (this.filter === 'important') return e.severity !== 'info';
    return e.group === this.filter;
  }

  setFilter(value) {
    this.filter = value;
    for (const e of this.events) e.node.hidden = !this.shows(e);
    this.showCount();
  }

  showCount() {
    const shown = this.events.filter((e) => !e.node.hidden).length;
    this.count.textContent = this.filter === 'all' ? `${this.events.length}` : `${shown} of ${this.events.length}`;
    this.empty.hidden = shown > 0;
  }
}
