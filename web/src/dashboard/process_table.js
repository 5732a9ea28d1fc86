// The process table: every process on every GPU, sortable by each column, with a filter box.
// Rows are keyed by (GPU, pid) and kept between snapshots: an update changes only the cells
// whose text changed and moves only the rows whose place changed.

import { el } from '../lib/dom.js';
import { formatBytes, formatPercent, formatValue, kNone } from '../lib/format.js';
import { setText } from './gpu_cards.js';

function containerText(p) {
  if (p.podName) return `${p.namespace}/${p.podName}`;
  if (p.container) return `${p.container.slice(0, 12)}${p.runtime ? ` (${p.runtime})` : ''}`;
  if (p.pod) return `pod ${p.pod.slice(0, 8)}`;
  if (p.slurm) return `slurm ${p.slurm}`;
  return '';
}

function containerTitle(p) {
  return [
    p.podName && `pod ${p.namespace}/${p.podName}, container ${p.containerName}`,
    p.container && `container ${p.container}${p.runtime ? ` (${p.runtime})` : ''}`,
    p.pod && `pod ${p.pod}`,
    p.slurm && `slurm job ${p.slurm}`,
  ].filter(Boolean).join('\n');
}

const na = (format) => (v) => (v == null ? 'N/A' : format(v));

// dir: the direction a first click sorts in (1 ascending, -1 descending).
export const kColumns = [
  { id: 'gpu', label: 'GPU', numeric: true, dir: 1, value: (p) => p.gpu, text: (p) => String(p.gpu) },
  { id: 'pid', label: 'PID', numeric: true, dir: 1, value: (p) => p.pid, text: (p) => String(p.pid ?? kNone) },
  { id: 'user', label: 'User', dir: 1, value: (p) => p.user, text: (p) => p.user || kNone },
  { id: 'container', label: 'Container', dir: 1, value: containerText, text: (p) => containerText(p) || kNone, title: containerTitle },
  { id: 'command', label: 'Command', dir: 1, value: (p) => p.command, text: (p) => p.command || kNone, title: (p) => p.command },
  { id: 'memory', label: 'Memory', numeric: true, dir: -1, value: (p) => p.memory, text: (p) => na(formatBytes)(p.memory) },
  { id: 'sm', label: 'SM %', numeric: true, dir: -1, value: (p) => p.sm, text: (p) => na(formatPercent)(p.sm) },
  { id: 'cpu', label: 'CPU %', numeric: true, dir: -1, value: (p) => p.cpu, text: (p) => na((v) => formatValue('%', v * 100))(p.cpu), title: (p) => (p.rss != null ? `host memory (RSS) ${formatBytes(p.rss)}` : '') },
];

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export class ProcessTable {
  constructor() {
    this.sort = { column: kColumns.find((c) => c.id === 'memory'), dir: -1 };
    this.filter = '';
    this.rows = new Map(); // key -> { tr, cells, p, haystack }
    this.order = []; // rows in table order
    this.headers = kColumns.map((c) => el('th', { class: c.numeric ? 'gw-num' : null, scope: 'col', 'data-col': c.id },
      el('button', { type: 'button', class: 'gw-sort', onclick: () => this.sortBy(c.id, this.sort.column === c ? -this.sort.dir : c.dir) }, c.label)));
    this.tbody = el('tbody');
    this.count = el('span', { class: 'gw-muted gw-count' });
    this.input = el('input', {
      type: 'search', class: 'gw-filter', placeholder: 'Filter: user, command, pid, container, GPU\u2026', 'aria-label': 'Filter processes',
      oninput: () => this.setFilter(this.input.value),
    });
    this.empty = el('p', { class: 'gw-nodata', hidden: true }, 'No processes are using the GPUs.');
    this.root = el('section', { class: 'gw-card gw-processes', id: 'gw-processes', 'aria-labelledby': 'gw-processes-h' },
      el('div', { class: 'gw-section-head' }, el('h2', { id: 'gw-processes-h' }, 'Processes'), this.count, this.input),
      el('div', { class: 'gw-table-scroll' },
        el('table', { class: 'gw-table gw-proc-table' }, el('thead', null, el('tr', null, this.headers)), this.tbody)),
      this.empty);
    this.showSort();
  }

  update(processes) {
    const seen = new Set();
    for (const p of processes) {
      seen.add(p.key);
      let row = this.rows.get(p.key);
      if (!row) {
        const cells = kColumns.map((c) => el('td', { class: c.numeric ? 'gw-num' : `gw-col-${c.id}` }));
        row = { tr: el('tr', { 'data-key': p.key }, cells), cells, p: null, haystack: '' };
        this.rows.set(p.key, row);
      }
      row.p = p;
      row.haystack = `gpu ${p.gpu} ${p.pid} ${p.user} ${p.name} ${p.command} ${p.container} ${p.runtime} ${p.pod} ${p.namespace}/${p.podName} ${p.containerName} ${p.slurm}`.toLowerCase();
      kColumns.forEach((c, i) => setText(row.cells[i], c.text(p), c.title ? c.title(p) : ''));
    }
    for (const [key, row] of this.rows) {
      if (!seen.has(key)) {
        row.tr.remove();
        this.rows.delete(key);
      }
    }
    this.apply();
  }

  sortBy(columnId, dir) {
    const column = kColumns.find((c) => c.id === columnId);
    if (!column) throw new Error(`no column ${columnId}`);
    this.sort = { column, dir: dir === 1 || dir === -1 ? dir : column.dir };
    this.showSort();
    this.apply();
  }

  setFilter(text) {
    this.filter = String(text || '').trim().toLowerCase();
    if (this.input.value.trim().toLowerCase() !== this.filter) this.input.value = text;
    this.apply();
  }

  showSort() {
    kColumns.forEach((c, i) => {
      const on = c === this.sort.column;
      const value = on ? (this.sort.dir === 1 ? 'ascending' : 'descending') : 'none';
      if (this.headers[i].getAttribute('aria-sort') !== value) this.headers[i].setAttribute('aria-sort', value);
    });
  }

  compare(a, b) {
    const { column, dir } = this.sort;
    const x = column.value(a.p);
    const y = column.value(b.p);
    // Missing values sort last in either direction; ties by GPU then pid.
    const xm = x == null || x === '';
    const ym = y == null || y === '';
    let c = 0;
    if (xm || ym) c = xm === ym ? 0 : xm ? 1 : -1;
    else c = dir * (column.numeric ? x - y : collator.compare(x, y));
    return c || a.p.gpu - b.p.gpu || (a.p.pid ?? 0) - (b.p.pid ?? 0);
  }

  // Filters, sorts and moves rows into place; only rows out of place are moved.
  apply() {
    const words = this.filter.split(/\s+/).filter(Boolean);
    let visible = 0;
    const order = [...this.rows.values()].sort((a, b) => this.compare(a, b));
    for (const row of order) {
      const show = words.every((w) => row.haystack.includes(w));
      if (row.tr.hidden === show) row.tr.hidden = !show;
      if (show) visible++;
    }
    const children = this.tbody.children;
    for (let i = 0; i < order.length; i++) {
      if (children[i] !== order[i].tr) this.tbody.insertBefore(order[i].tr, children[i] || null);
    }
    this.order = order;
    const total = order.length;
    setText(this.count, words.length ? `${visible} of ${total}` : `${total} process${total === 1 ? '' : 'es'}`);
    this.empty.hidden = total > 0;
  }

  // For tests: the visible rows in table order.
  visibleRows() {
    return this.order.filter((r) => !r.tr.hidden).map((r) => ({
      gpu: r.p.gpu, pid: r.p.pid, user: r.p.user, container: containerText(r.p), command: r.p.command, memory: r.p.memory, sm: r.p.sm, cpu: r.p.cpu,
    }));
  }
}
