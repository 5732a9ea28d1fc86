// The charts of the report: one card per chart spec, all in one ChartGroup (synced cursor and
// zoom), a toolbar showing the visible range with a reset button, and a "no data recorded"
// note in place of a chart whose data is all null.

import { el, clear } from '../lib/dom.js';
import { ChartGroup, observeWidth } from '../lib/chart_group.js';
import { FloatingTip } from '../lib/floating_tip.js';
import { makeTimeChart } from '../lib/time_chart.js';
import { formatClock, formatDuration } from '../lib/format.js';

const kChartHeight = { 'memory-process': 300 };
const kDefaultHeight = 220;

export class ChartsSection {
  // specs: from buildChartSpecs; t: the shared x axis; annotations: normalised, sorted.
  constructor({ specs, t, annotations, start, fullRange }) {
    this.specs = specs;
    this.t = t;
    this.annotations = annotations;
    this.start = start;
    this.full_range = fullRange;
    this.group = null;
    this.tips = null;
    this.stop_observing = null;
    this.range_label = el('span', { class: 'gw-range' });
    this.reset_button = el('button', { type: 'button', class: 'gw-button', disabled: true, onclick: () => this.reset() }, 'Reset zoom');
    this.cards = el('div', { class: 'gw-charts' });
    this.root = el('section', { class: 'gw-charts-section', 'aria-label': 'Charts' },
      el('div', { class: 'gw-toolbar' },
        this.range_label,
        el('span', { class: 'gw-hint' }, 'Drag across a chart to zoom \u00b7 double-click to reset \u00b7 click an event to jump to it'),
        this.reset_button),
      this.cards);
  }

  // Builds (or rebuilds, after a colour-scheme change) every chart. Call once the section is
  // in the document, so widths are known.
  render(theme) {
    const previous = this.group ? this.group.xRange() : null;
    this.destroy();
    clear(this.cards);
    this.group = new ChartGroup(this.full_range);
    this.tips = { cursor: new FloatingTip('gw-tip-cursor'), annotation: new FloatingTip('gw-tip-annotation') };
    this.group.onZoom((min, max) => this.showRange(min, max));
    const hosts = this.specs.map((spec) => {
      const host = el('div', { class: 'gw-plot' });
      const card = el('section', { class: 'gw-card gw-chart', id: `gw-chart-${spec.id}`, 'data-chart-id': spec.id },
        el('div', { class: 'gw-card-head' }, el('h2', null, spec.title), el('span', { class: 'gw-unit' }, spec.unit)),
        spec.nonNull > 0
          ? host
          : el('p', { class: 'gw-nodata' }, 'No data recorded for this chart during the run.'));
      this.cards.appendChild(card);
      return spec.nonNull > 0 ? host : null;
    });
    const width = this.plotWidth();
    this.specs.forEach((spec, i) => {
      if (!hosts[i]) return;
      makeTimeChart(hosts[i], this.t, {
        spec,
        width,
        height: kChartHeight[spec.id] || kDefaultHeight,
        theme,
        group: this.group,
        tips: this.tips,
        annotations: this.annotations,
        start: this.start,
        onSelectAnnotation: (a) => this.zoomAround(a.t),
      });
    });
    this.stop_observing = observeWidth(this.cards, () => this.group.setWidth(this.plotWidth()));
    if (previous) this.group.zoomTo(previous[0], previous[1]);
    this.showRange(...this.group.xRange());
  }

  plotWidth() {
    const host = this.cards.querySelector('.gw-plot');
    return Math.max(320, Math.floor((host || this.cards).clientWidth));
  }

  showRange(min, max) {
    if (min == null || max == null) return;
    const zoomed = min > this.full_range[0] || max < this.full_range[1];
    this.range_label.textContent = `${zoomed ? 'Zoomed to' : 'Showing'} ${formatClock(min)} \u2013 ${formatClock(max)} (${formatDuration(max - min)})`;
    this.reset_button.disabled = !zoomed;
  }

  // Zooms all charts to ±5 % of the whole run around t.
  zoomAround(t) {
    const span = (this.full_range[1] - this.full_range[0]) * 0.05 || 1;
    this.group.zoomTo(t - span, t + span);
  }

  reset() {
    this.group.reset();
  }

  destroy() {
    if (this.stop_observing) this.stop_observing();
    this.stop_observing = null;
    if (this.group) this.group.destroy();
    if (this.tips) {
      this.tips.cursor.destroy();
      this.tips.annotation.destroy();
    }
  }
}
