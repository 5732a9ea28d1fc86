// Active alerts and suspected leaks (growth rate, time to out-of-memory), from the snapshot.
// Rebuilt only when what it shows changes (durations are shown to the minute).

import { el, clear } from '../lib/dom.js';
import { formatByteRate, formatClock, formatDuration, kNone } from '../lib/format.js';

const kSeverityRank = { critical: 0, warning: 1, info: 2 };

// To the minute: "for < 1 min", "for 12 min", "for 3 h 5 min".
function forDuration(seconds) {
  if (seconds < 60) return 'for < 1 min';
  if (seconds < 3600) return `for ${Math.floor(seconds / 60)} min`;
  return `for ${formatDuration(Math.floor(seconds / 60) * 60)}`;
}

export class AlertsPanel {
  constructor() {
    this.alerts_body = el('tbody');
    this.leaks_body = el('tbody');
    this.alert_count = el('span', { class: 'gw-badge' });
    this.no_alerts = el('p', { class: 'gw-muted gw-none' }, 'No active alerts.');
    this.leaks_block = el('div', { class: 'gw-leaks', hidden: true },
      el('h3', null, 'Suspected leaks'),
      el('table', { class: 'gw-table' },
        el('thead', null, el('tr', null,
          el('th', null, 'GPU'), el('th', null, 'Scope'), el('th', { class: 'gw-num' }, 'Growth'),
          el('th', { class: 'gw-num' }, 'Out of memory in'), el('th', null, 'Details'))),
        this.leaks_body));
    this.root = el('section', { class: 'gw-card gw-alerts', id: 'gw-alerts', 'aria-labelledby': 'gw-alerts-h' },
      el('div', { class: 'gw-section-head' }, el('h2', { id: 'gw-alerts-h' }, 'Alerts'), this.alert_count),
      this.no_alerts,
      el('table', { class: 'gw-table gw-alert-table' }, this.alerts_body),
      this.leaks_block);
    this.key = null;
    this.count = 0;
  }

  update(snapshot) {
    const now = snapshot.time ?? Date.now() / 1000;
    const alerts = [...snapshot.alerts].sort((a, b) => kSeverityRank[a.severity] - kSeverityRank[b.severity] || (a.gpu ?? -1) - (b.gpu ?? -1));
    const age = (a) => (a.since == null ? null : Math.floor((now - a.since) / 60));
    const key = JSON.stringify([alerts.map((a) => [a.severity, a.gpu, a.rule, a.message, age(a)]),
      snapshot.leaks.map((l) => [l.gpu, l.scope, l.pid, Math.round(l.rate / 1024), Math.round((l.timeToOom ?? -60) / 60), l.message])]);
    this.count = alerts.length;
    if (key === this.key) return;
    this.key = key;

    clear(this.alerts_body);
    for (const a of alerts) {
      this.alerts_body.appendChild(el('tr', { class: `gw-alert gw-sev-${a.severity}`, 'data-gpu': a.gpu ?? '' },
        el('td', { class: 'gw-nowrap' }, el('span', { class: 'gw-sev-dot' }), ` ${a.severity}`),
        el('td', { class: 'gw-nowrap' }, a.gpu == null ? 'host' : `GPU ${a.gpu}`),
        el('td', { class: 'gw-alert-text' }, el('div', null, a.message || a.rule), a.message ? el('div', { class: 'gw-muted gw-small' }, a.rule) : null),
        el('td', { class: 'gw-nowrap gw-muted', title: a.since == null ? null : `since ${formatClock(a.since)}` },
          a.since == null ? kNone : forDuration(now - a.since))));
    }
    this.no_alerts.hidden = alerts.length > 0;
    this.alert_count.textContent = String(alerts.length);
    this.alert_count.className = `gw-badge${alerts.some((a) => a.severity === 'critical') ? ' gw-sev-critical' : alerts.length ? ' gw-sev-warning' : ''}`;

    clear(this.leaks_body);
    for (const l of snapshot.leaks) {
      this.leaks_body.appendChild(el('tr', { class: 'gw-leak-row' },
        el('td', { class: 'gw-nowrap' }, l.gpu == null ? kNone : `GPU ${l.gpu}`),
        el('td', { class: 'gw-nowrap' }, l.scope === 'process' && l.pid != null ? `pid ${l.pid}` : l.scope),
        el('td', { class: 'gw-num' }, formatByteRate(l.rate)),
        el('td', { class: `gw-num${l.timeToOom != null && l.timeToOom < 3600 ? ' gw-error-text' : ''}` }, l.timeToOom == null ? kNone : formatDuration(l.timeToOom)),
        el('td', { class: 'gw-alert-text' }, l.message)));
    }
    this.leaks_block.hidden = snapshot.leaks.length === 0;
  }
}
