// Builds a uPlot time chart from a chart spec; shared by the report and the dashboard.
//
// spec: {
//   id, title, unit ('GiB', '%', 'W', '°C'), yRange ('zero' | 'percent' | 'auto' | a uPlot range function),
//   series: [{ label, title?, values: (number|null)[], color, dash?: number[], width?, reference? }],
// }
// A reference series (a device's total memory) is drawn dashed and left out of tooltips and of
// the data counts. null values are gaps, never joined.

import uPlot from 'uplot';
import { formatClock, formatTick, formatValue } from './format.js';
import { annotationsPlugin, annotationsNear, annotationNodes, kRailHeight } from './annotations.js';
import { cursorTooltipPlugin } from './cursor_tooltip.js';

// Same y-axis width on every chart, so the plot areas (and the synced cursor) line up.
export const kYAxisWidth = 72;

function yRangeFn(kind) {
  if (typeof kind === 'function') return kind; // (u, min, max) -> [min, max], as uPlot calls it
  if (kind === 'percent') return () => [0, 100];
  if (kind === 'zero') {
    return (u, min, max) => uPlot.rangeNum(0, max == null || !(max > 0) ? 1 : max, 0.1, true);
  }
  return (u, min, max) => {
    if (min == null || max == null) return [0, 1];
    return uPlot.rangeNum(min, max === min ? min + 1 : max, 0.1, true);
  };
}

const pad2 = (n) => String(n).padStart(2, '0');

// The CSS border style that looks like a canvas dash pattern (legend and tooltip swatches).
function dashStyle(dash) {
  if (!dash || dash.length === 0) return 'solid';
  return dash[0] <= 3 ? 'dotted' : 'dashed';
}

// Tick labels on the time axis: local wall-clock time; the date is added where it changes when
// the range spans more than a day.
function timeTicks(u, splits, axisIdx, space, incr) {
  const { min, max } = u.scales.x;
  const multiDay = max - min > 86400;
  let lastDay = null;
  return splits.map((t) => {
    const d = new Date(t * 1000);
    const clock = incr % 60 === 0 ? formatClock(t).slice(0, 5) : formatClock(t);
    const day = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
    const text = multiDay && day !== lastDay ? `${clock}\n${day.slice(5)}` : clock;
    lastDay = day;
    return incr >= 86400 ? day.slice(5) : text;
  });
}

// options: { spec, t, width, height, theme, group (ChartGroup), tips: { cursor, annotation },
//            annotations, start, onSelectAnnotation(a),
//            xRange(u, min, max) (optional: the x range to show, e.g. a live window),
//            zoom (default true: dragging across the plot zooms) }
// start: offsets in the tooltip are from it; null shows the clock time only.
export function timeChartOptions({ spec, width, height, theme, group, tips, annotations = [], start, onSelectAnnotation, xRange, zoom = true }) {
  const meta = [null, ...spec.series.map((s) => ({ color: s.color, dash: dashStyle(s.dash), reference: !!s.reference }))];
  const many = spec.series.length > 24;
  const axis = {
    stroke: theme.axis,
    font: theme.font,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { stroke: theme.grid, width: 1, size: 4 },
  };
  return {
    width,
    height,
    padding: [kRailHeight + 4, 12, 0, 0],
    cursor: {
      sync: { key: group.key, setSeries: false },
      drag: { x: zoom, y: false, setScale: zoom },
      points: { show: !many, size: 6 },
      // Highlighting the nearest series redraws every series; too slow with many of them.
      focus: { prox: many ? -1 : 12 },
    },
    focus: { alpha: 0.35 },
    select: { show: true },
    legend: {
      show: true,
      live: false,
      markers: { dash: (u, i) => dashStyle(u.series[i].dash) },
    },
    scales: { x: xRange ? { time: true, range: xRange } : { time: true }, y: { range: yRangeFn(spec.yRange) } },
    axes: [
      { ...axis, space: 64, values: timeTicks },
      {
        ...axis,
        size: kYAxisWidth,
        space: 28,
        values: (u, splits, axisIdx, space, incr) => splits.map((v) => formatTick(spec.unit, v, incr)),
      },
    ],
    series: [
      { value: (u, v) => formatClock(v) },
      ...spec.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: s.width || (s.reference ? 1 : 1.5),
        dash: s.dash,
        spanGaps: false,
        value: (u, v) => formatValue(spec.unit, v),
      })),
    ],
    hooks: { setScale: [group.setScaleHook()] },
    plugins: [
      annotationsPlugin({ annotations, colors: theme.severity, tip: tips.annotation, start, onSelect: onSelectAnnotation }),
      cursorTooltipPlugin({
        tip: tips.cursor,
        unit: spec.unit,
        start,
        meta,
        extra: (u, left) => annotationsNear(u, annotations, left).map((a) => annotationNodes(a, start)),
      }),
    ],
  };
}

// Creates the chart inside `host` and adds it to the group. Legend entries get the full
// series title as a hover title.
export function makeTimeChart(host, t, options) {
  const { spec } = options;
  const data = [t, ...spec.series.map((s) => s.values)];
  const u = new uPlot(timeChartOptions(options), data, host);
  const rows = u.root.querySelectorAll('.u-legend .u-series');
  const first = rows.length - spec.series.length; // 1 when the legend has a time row
  spec.series.forEach((s, i) => {
    const row = rows[i + first];
    if (row && s.title) row.title = s.title;
  });
  options.group.add(u);
  return u;
}
