// A uPlot chart over a numeric x axis (batch size, copies), for the sweep page: lib/time_chart.js
// reads x as time (clock ticks, annotations, a synced time cursor), so it does not fit here.
//
// spec: {
//   id, title, unit ('GiB', '/s'), xLabel, xMax,
//   x: number[] (ascending; the union of every series' x), xWhole: ticks at whole numbers only,
//   series: [{ label, kind, values: (number|null)[], color, dash?, points?: true (markers only),
//              line?: true (a line through its non-null values) }],
//   marks: [{ kind, x, label, color, dash? }]  vertical lines with a label at the top,
// }

import uPlot from 'uplot';
import { formatTick, formatValue } from '../lib/format.js';

const kMarkFont = '11px system-ui, sans-serif';

function dashStyle(dash) {
  if (!dash || dash.length === 0) return 'solid';
  return dash[0] <= 3 ? 'dotted' : 'dashed';
}

// Vertical lines at spec.marks, labelled at the top, staggered when they are close.
function marksPlugin(marks) {
  return {
    hooks: {
      draw: [(u) => {
        const { ctx } = u;
        const top = u.bbox.top;
        const bottom = u.bbox.top + u.bbox.height;
        const ratio = window.devicePixelRatio || 1;
        let lastRight = -Infinity;
        let row = 0;
        ctx.save();
        ctx.font = kMarkFont.replace('11px', `${Math.round(11 * ratio)}px`);
        ctx.textBaseline = 'top';
        for (const m of [...marks].sort((a, b) => a.x - b.x)) {
          const x = Math.round(u.valToPos(m.x, 'x', true));
          if (x < u.bbox.left - 1 || x > u.bbox.left + u.bbox.width + 1) continue;
          ctx.strokeStyle = m.color;
          ctx.lineWidth = ratio;
          ctx.setLineDash((m.dash || [4, 3]).map((d) => d * ratio));
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, bottom);
          ctx.stroke();
          const width = ctx.measureText(m.label).width;
          row = x - 4 < lastRight ? row + 1 : 0;
          const left = Math.min(x + 4 * ratio, u.bbox.left + u.bbox.width - width - 2);
          ctx.fillStyle = m.color;
          ctx.fillText(m.label, left, top + 3 + row * 14 * ratio);
          lastRight = left + width;
        }
        ctx.restore();
      }],
    },
  };
}

export function xyChartOptions({ spec, width, height, theme }) {
  const axis = {
    stroke: theme.axis,
    font: theme.font,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { stroke: theme.grid, width: 1, size: 4 },
  };
  return {
    width,
    height,
    padding: [12, 16, 0, 0],
    cursor: { drag: { x: false, y: false }, points: { size: 7 } },
    legend: { show: true, live: true, markers: { dash: (u, i) => dashStyle(u.series[i].dash) } },
    scales: {
      x: { time: false, range: () => [0, spec.xMax] },
      y: { range: (u, min, max) => uPlot.rangeNum(0, max == null || !(max > 0) ? 1 : max, 0.1, true) },
    },
    axes: [
      { ...axis, label: spec.xLabel, labelFont: theme.font, labelSize: 20, space: 60,
        incrs: spec.xWhole ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] : undefined,
        values: (u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : v.toFixed(1))) },
      { ...axis, size: 72, space: 28, values: (u, splits, i, s, incr) => splits.map((v) => formatTick(spec.unit, v, incr)) },
    ],
    series: [
      { label: spec.xLabel, value: (u, v) => (v == null ? '\u2014' : String(+v.toFixed(2))) },
      ...spec.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: s.points && !s.line ? 0 : 1.5,
        dash: s.dash,
        spanGaps: !!s.line,
        paths: s.points && !s.line ? () => null : undefined,
        points: s.points ? { show: true, size: 8, stroke: s.color, fill: s.color } : { show: false },
        value: (u, v) => formatValue(spec.unit, v),
      })),
    ],
    plugins: [marksPlugin(spec.marks || [])],
  };
}

export function makeXyChart(host, options) {
  const { spec } = options;
  return new uPlot(xyChartOptions(options), [spec.x, ...spec.series.map((s) => s.values)], host);
}
