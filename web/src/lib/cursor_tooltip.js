// uPlot plugin: a tooltip that follows the cursor in the chart being hovered (charts that only
// follow a synced cursor show none). Lists the series that have a value at the cursor, largest
// first, formatted in the chart's unit; extra(u, left) may add nodes (e.g. nearby annotations).

import { el } from './dom.js';
import { formatClock, formatOffset, formatValue } from './format.js';

const kMaxRows = 12;

// options:
//   tip: FloatingTip; unit: display unit of the values; start: run start (unix seconds), or
//        null to show the clock time without an offset
//   meta[i]: { color, dash ('solid'|'dashed'|'dotted'), reference } for uPlot series i (i >= 1);
//            reference lines are not listed
//   extra(u, left): optional, more nodes for the tooltip
export function cursorTooltipPlugin({ tip, unit, start, meta, extra }) {
  let hovered = false;

  function update(u) {
    const { left, top, idx } = u.cursor;
    if (!hovered || idx == null || left == null || left < 0) {
      tip.hide();
      return;
    }
    const t = u.data[0][idx];
    const rows = [];
    let hidden = 0;
    for (let i = 1; i < u.series.length; i++) {
      const s = u.series[i];
      if (!s.show || meta[i].reference) continue;
      const v = u.data[i][idx];
      if (v == null) continue;
      rows.push({ i, v, s });
    }
    rows.sort((a, b) => b.v - a.v);
    if (rows.length > kMaxRows) {
      hidden = rows.length - kMaxRows;
      rows.length = kMaxRows;
    }
    const focused = focusedSeries(u);
    const nodes = [
      el('div', { class: 'gw-tip-time' }, formatClock(t), start == null ? null : el('span', { class: 'gw-muted' }, ` ${formatOffset(t - start)}`)),
    ];
    if (rows.length === 0) nodes.push(el('div', { class: 'gw-muted' }, 'no reading at this time'));
    const table = el('table', { class: 'gw-tip-rows' });
    for (const r of rows) {
      table.appendChild(el('tr', { class: r.i === focused ? 'gw-focus' : null },
        el('td', null, el('span', { class: 'gw-line-swatch', style: `border-top: 2px ${meta[r.i].dash || 'solid'} ${meta[r.i].color}` })),
        el('td', { class: 'gw-tip-label' }, r.s.label),
        el('td', { class: 'gw-tip-value' }, formatValue(unit, r.v))));
    }
    if (rows.length) nodes.push(table);
    if (hidden) nodes.push(el('div', { class: 'gw-muted' }, `+ ${hidden} more`));
    if (extra) nodes.push(...extra(u, left));
    const rect = u.over.getBoundingClientRect();
    tip.show(nodes, rect.left + left, rect.top + top);
  }

  // uPlot marks the series nearest the cursor (cursor.focus) with _focus.
  function focusedSeries(u) {
    if (!u.cursor.focus || !(u.cursor.focus.prox >= 0)) return -1;
    for (let i = 1; i < u.series.length; i++) if (u.series[i]._focus) return i;
    return -1;
  }

  return {
    hooks: {
      init: (u) => {
        u.over.addEventListener('mouseenter', () => {
          hovered = true;
        });
        u.over.addEventListener('mouseleave', () => {
          hovered = false;
          tip.hide();
        });
      },
      setCursor: update,
      destroy: () => tip.hide(),
    },
  };
}
