// Entry point of the live dashboard that `gpuwatch serve` serves at "/". Reads the snapshot
// and recent events, then follows /api/v1/stream; renders at most once per animation frame.
// Publishes window.gpuwatchDashboard for the browser check (tests/browser/check_dashboard.mjs).

import 'uplot/dist/uPlot.min.css';
import '../lib/theme.css';
import './dashboard.css';
import { el } from '../lib/dom.js';
import { readTheme, onColorSchemeChange } from '../lib/palette.js';
import { formatDuration } from '../lib/format.js';
import { getJson, StreamClient } from './api.js';
import { normaliseSnapshot, normaliseEvent, snapshotStatuses } from './model.js';
import { Header } from './header.js';
import { GpuCards } from './gpu_cards.js';
import { LiveCharts } from './live_charts.js';
import { ProcessTable } from './process_table.js';
import { AlertsPanel } from './alerts_panel.js';
import { Timeline } from './timeline.js';

const kEventsBack = 86400;
const kEventsLimit = 500;
// A stream that says nothing for this many sample intervals is stale.
const kStaleIntervals = 3;

class Dashboard {
  constructor(root) {
    // What the server put in the page it served: "demo" for a demo (or a replayed demo
    // recording), so the first paint already says DEMO; the snapshots keep it up to date.
    this.served_demo = root.dataset.source === 'demo';
    this.header = new Header(this.served_demo);
    this.cards = new GpuCards();
    this.charts = new LiveCharts();
    this.processes = new ProcessTable();
    this.alerts = new AlertsPanel();
    this.timeline = new Timeline();
    this.snapshot = null;
    this.frame = 0;
    this.again = false;
    this.connection = 'connecting';
    this.retry_in = 0;
    this.last_message_ms = 0;
    this.started_ms = Date.now();
    this.events_loaded = false;
    this.reconnected = false;
    this.stale = false;
    this.statuses = new Map(); // GPU index -> model.js deviceStatus
    // The page as served (the skeleton that says "connecting" and DEMO before this script ran)
    // is replaced by the live one, which says the same until the first snapshot.
    root.textContent = '';
    root.append(
      this.header.root,
      this.cards.root,
      this.charts.root,
      this.processes.root,
      el('div', { class: 'gw-lower' }, this.alerts.root, this.timeline.root));
    this.stream = new StreamClient({
      onSnapshot: (s) => this.onSnapshot(s, true),
      onEvent: (e) => this.onEvent(e),
      onState: (state, detail) => this.onStreamState(state, detail),
    });
  }

  async start() {
    this.charts.build(readTheme());
    onColorSchemeChange(() => this.charts.build(readTheme()));
    await this.loadSnapshot();
    this.loadEvents(this.snapshot && this.snapshot.time != null ? this.snapshot.time - kEventsBack : null);
    this.stream.start();
    setInterval(() => this.checkStale(), 1000);
  }

  async loadSnapshot() {
    for (let attempt = 0; ; attempt++) {
      try {
        this.onSnapshot(await getJson('snapshot'), false);
        this.header.showError(null);
        return;
      } catch (e) {
        const wait = Math.min(30, 2 ** attempt);
        this.header.showError(`Cannot read the snapshot from the gpuwatch server (${e.message}); trying again in ${wait} s.`);
        await new Promise((done) => setTimeout(done, wait * 1000));
      }
    }
  }

  async loadEvents(since) {
    try {
      const body = await getJson('events', { since, limit: kEventsLimit });
      const events = (body.events || []).map(normaliseEvent);
      this.timeline.add(events);
    } catch (e) {
      this.timeline.add([{ time: Date.now() / 1000, kind: 'error', severity: 'warning', source: 'dashboard', gpu: null, pid: null, message: `Could not read past events: ${e.message}` }]);
    }
    this.events_loaded = true;
    this.schedule();
  }

  onSnapshot(raw, fromStream) {
    if (fromStream) this.last_message_ms = Date.now();
    const snapshot = normaliseSnapshot(raw);
    // A snapshot GET answered after the stream's first message is older: not shown over it. (The
    // stream itself is always followed: after a server restart, sequence numbers start again.)
    if (!fromStream && this.snapshot && snapshot.time != null && this.snapshot.time != null && snapshot.time <= this.snapshot.time) return;
    this.snapshot = snapshot;
    this.stream.setInterval(snapshot.interval);
    this.charts.onSnapshot(snapshot);
    this.schedule();
  }

  onEvent(raw) {
    this.last_message_ms = Date.now();
    const e = normaliseEvent(raw);
    this.timeline.add([e]);
  }

  onStreamState(state, detail) {
    if (state === 'open' && this.reconnected && this.timeline.latestTime != null) {
      // Events sent while we were away.
      this.loadEvents(this.timeline.latestTime - 1);
    }
    if (state === 'retrying') this.reconnected = true;
    this.connection = state;
    this.retry_in = detail && detail.delay;
    this.checkStale();
  }

  checkStale() {
    const s = this.snapshot;
    const intervalMs = (s ? s.interval : 1) * 1000;
    const since = this.last_message_ms || this.started_ms;
    const silentMs = Date.now() - since;
    let reason = null;
    if (s && s.stale) reason = 'the server says this sample is stale: the GPUs have not answered in time (a hung driver call?). Values are the last ones read.';
    else if (silentMs > kStaleIntervals * intervalMs) {
      reason = `no data from the server for ${formatDuration(Math.round(silentMs / 1000))}${this.connection === 'open' ? '' : ' (reconnecting)'}. Values are the last ones received.`;
    }
    this.stale = reason != null;
    this.header.showState({ connection: this.connection, retryIn: this.retry_in, time: s && s.time, stale: this.stale, reason });
  }

  // Renders the latest snapshot in three animation frames (cards, then the process table, then
  // the charts), so that no single frame does all the work. Snapshots that arrive meanwhile
  // replace the one being drawn; hidden tabs draw nothing until shown.
  schedule() {
    if (this.frame) this.again = true;
    else this.frame = requestAnimationFrame(() => this.render(0));
  }

  render(part) {
    const s = this.snapshot;
    if (s) {
      if (part === 0) {
        this.header.update(s);
        this.statuses = snapshotStatuses(s);
        this.cards.update(s, (d) => this.statuses.get(d.index));
        this.alerts.update(s);
        this.checkStale();
      } else if (part === 1) {
        this.processes.update(s.processes);
      } else {
        this.charts.flush();
      }
    }
    const next = part < 2 ? part + 1 : this.again ? 0 : -1;
    if (next === 0) this.again = false;
    this.frame = next >= 0 ? requestAnimationFrame(() => this.render(next)) : 0;
  }

  get ready() {
    return !!this.snapshot && this.charts.loaded && this.charts.charts.length > 0 && this.events_loaded && this.cards.count === this.snapshot.devices.length;
  }
}

function main() {
  const root = document.getElementById('gpuwatch-dashboard') || document.body;
  const d = new Dashboard(root);
  window.gpuwatchDashboard = {
    get ready() { return d.ready; },
    get cards() { return d.cards.count; },
    get charts() { return d.charts.summary(); },
    get processRows() { return d.processes.rows.size; },
    get alerts() { return d.alerts.count; },
    get events() { return d.timeline.events.length; },
    get lastMessageAt() { return d.last_message_ms; },
    get stale() { return d.stale; },
    get demo() { return !!(d.snapshot && d.snapshot.demo); },
    get statuses() { return [...d.statuses].map(([gpu, st]) => ({ gpu, level: st.level, label: st.label, reasons: st.reasons.map((x) => `${x.level}: ${x.text}`) })); },
    // The status mechanism itself, on any snapshot JSON and events (for checks of its rules).
    statusFor: (rawSnapshot, gpu) => {
      const st = snapshotStatuses(normaliseSnapshot(rawSnapshot)).get(gpu);
      return st ? { level: st.level, label: st.label, reasons: st.reasons.map((x) => `${x.level}: ${x.text}`) } : null;
    },
    get sequence() { return d.snapshot ? d.snapshot.sequence : null; },
    sortBy: (column, dir) => d.processes.sortBy(column, dir),
    filter: (text) => d.processes.setFilter(text),
    visibleProcesses: () => d.processes.visibleRows(),
    setRange: (id) => d.charts.setRange(id),
    selectGpu: (value) => d.charts.select(String(value)),
    get range() { return d.charts.range.id; },
    get chartsLoading() { return d.charts.loading; },
  };
  d.start();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
else main();
