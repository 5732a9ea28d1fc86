// The top of the page: host facts, the connection state, and the DEMO, STALE and error banners.

import { el } from '../lib/dom.js';
import { formatClock, formatDateTime } from '../lib/format.js';
import { setText } from './gpu_cards.js';

// The DEMO banner's text; dashboard.html carries the same, shown before any script runs.
export const kDemoText = ' \u2014 simulated GPUs from the demo fleet. Nothing here is measured on this machine\u2019s hardware.';

export class Header {
  // demo: what the served page said (data-source="demo"), until a snapshot says otherwise.
  constructor(demo = false) {
    this.served_demo = demo;
    this.host = el('span', { class: 'gw-host' });
    this.facts = el('span', { class: 'gw-facts-line gw-muted' });
    this.live = el('span', { class: 'gw-live', 'aria-live': 'polite' });
    this.demo = el('div', { class: 'gw-demo', id: 'gw-demo', role: 'note', hidden: !demo }, el('strong', null, 'DEMO'), kDemoText);
    this.stale_text = el('span');
    this.stale = el('div', { class: 'gw-stale', id: 'gw-stale', role: 'alert', hidden: true }, el('strong', null, 'STALE'), ' ', this.stale_text);
    this.error = el('div', { class: 'gw-warning', id: 'gw-error', role: 'alert', hidden: true });
    this.root = el('header', { class: 'gw-top' },
      el('div', { class: 'gw-bar' },
        el('span', { class: 'gw-brand' }, 'gpuwatch'),
        this.host,
        this.facts,
        this.live),
      this.demo,
      this.stale,
      this.error);
    this.showState({ connection: 'connecting', time: null, stale: false });
  }

  update(snapshot) {
    setText(this.host, snapshot.hostname || '');
    const facts = [
      `${snapshot.devices.length} GPU${snapshot.devices.length === 1 ? '' : 's'}`,
      snapshot.driver && `driver ${snapshot.driver}`,
      snapshot.cuda && `CUDA ${snapshot.cuda}`,
      `every ${snapshot.interval} s`,
    ].filter(Boolean).join(' \u00b7 ');
    setText(this.facts, facts);
    // A daemon that has not sampled yet answers a snapshot without a time (and demo false).
    this.demo.hidden = !(snapshot.time == null ? this.served_demo || snapshot.demo : snapshot.demo);
  }

  // state: { connection: 'connecting'|'open'|'retrying', retryIn, time (last sample), stale, reason }
  showState({ connection, retryIn, time, stale, reason }) {
    const sample = time == null ? 'waiting for data' : `sample ${formatClock(time)}`;
    const text = connection === 'open' ? `\u25cf live \u00b7 ${sample}`
      : connection === 'retrying' ? `reconnecting${retryIn ? ` in ${retryIn} s` : ''} \u00b7 ${sample}`
        : time == null ? 'connecting\u2026' : `connecting \u00b7 ${sample}`;
    setText(this.live, text, time == null ? '' : formatDateTime(time));
    this.live.className = `gw-live gw-live-${stale ? 'stale' : connection}`;
    this.stale.hidden = !stale;
    if (stale) setText(this.stale_text, reason || '');
  }

  showError(message) {
    this.error.hidden = !message;
    if (message) setText(this.error, message);
  }
}
