// uPlot plugin: annotations (alerts, leaks, marks, process exits...) as thin vertical lines
// coloured by severity, with a marker rail above the plot whose markers show the text on
// hover and zoom to the annotation on click.
//
// annotation: { t: unix seconds, severity: 'info'|'warning'|'critical', kind, gpu, text }

import uPlot from 'uplot';
import { el } from './dom.js';
import { formatClock, formatOffset } from './format.js';

export const kRailHeight = 12;

// Tooltip body for one annotation; start: the run's start time, for the "+m:ss" offset.
export function annotationNodes(a, start) {
  const where = a.gpu == null ? '' : ` \u00b7 GPU ${a.gpu}`;
  return el('div', { class: `gw-tip-ann gw-sev-${a.severity}` },
    el('div', { class: 'gw-tip-ann-head' },
      el('span', { class: 'gw-sev-dot' }),
      `${formatClock(a.t)} (${formatOffset(a.t - start)}) \u00b7 ${a.severity} \u00b7 ${a.kind}${where}`),
    el('div', { class: 'gw-tip-ann-text' }, a.text));
}

// Annotations whose line lies within `px` CSS pixels of the cursor's left position.
export function annotationsNear(u, annotations, left, px = 5) {
  if (left == null || left < 0) return [];
  const found = [];
  for (const a of annotations) {
    const x = u.valToPos(a.t, 'x');
    if (Math.abs(x - left) <= px) found.push(a);
  }
  return found;
}

// options:
//   annotations: the list above
//   colors: { info, warning, critical } line colours
//   tip: a FloatingTip for the marker hover text
//   start: run start (for offsets in the tip)
//   onSelect(annotation): marker clicked
export function annotationsPlugin({ annotations, colors, tip, start, onSelect }) {
  let rail = null;
  let markers = [];
  let plot = null;

  function init(u) {
    plot = u;
    rail = el('div', { class: 'gw-ann-rail', 'aria-label': 'annotations' });
    markers = annotations.map((a, i) => {
      const marker = el('button', {
        type: 'button',
        class: `gw-ann gw-sev-${a.severity}`,
        'data-index': i,
        'aria-label': `${a.severity} ${a.kind}: ${a.text}`,
      });
      // Markers closer than a few pixels overlap: the tip lists every annotation at this spot.
      const showTip = () => {
        const r = marker.getBoundingClientRect();
        const here = annotationsNear(plot, annotations, plot.valToPos(a.t, 'x'), 9);
        tip.show((here.length ? here : [a]).map((x) => annotationNodes(x, start)), r.left + r.width / 2, r.bottom);
      };
      marker.addEventListener('mouseenter', showTip);
      marker.addEventListener('focus', showTip);
      marker.addEventListener('mouseleave', () => tip.hide());
      marker.addEventListener('blur', () => tip.hide());
      marker.addEventListener('click', () => onSelect && onSelect(a));
      rail.appendChild(marker);
      return marker;
    });
    u.over.parentNode.appendChild(rail);
  }

  function placeRail(u) {
    const pr = uPlot.pxRatio;
    const left = u.bbox.left / pr;
    const width = u.bbox.width / pr;
    rail.style.left = `${left}px`;
    rail.style.width = `${width}px`;
    rail.style.top = `${u.bbox.top / pr - kRailHeight - 1}px`;
    const { min, max } = u.scales.x;
    for (let i = 0; i < annotations.length; i++) {
      const t = annotations[i].t;
      const visible = t >= min && t <= max;
      markers[i].style.display = visible ? '' : 'none';
      if (visible) markers[i].style.left = `${u.valToPos(t, 'x')}px`;
    }
  }

  function drawLines(u) {
    const ctx = u.ctx;
    const pr = uPlot.pxRatio;
    const { left, top, width, height } = u.bbox;
    const { min, max } = u.scales.x;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    // Critical last, so it is drawn over the others.
    for (const severity of ['info', 'warning', 'critical']) {
      ctx.beginPath();
      ctx.strokeStyle = colors[severity];
      ctx.lineWidth = (severity === 'critical' ? 1.5 : 1) * pr;
      ctx.globalAlpha = { info: 0.55, warning: 0.6, critical: 0.95 }[severity];
      ctx.setLineDash(severity === 'info' ? [4 * pr, 3 * pr] : []);
      for (const a of annotations) {
        if (a.severity !== severity || a.t < min || a.t > max) continue;
        const x = Math.round(u.valToPos(a.t, 'x', true)) + 0.5;
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
      }
      ctx.stroke();
    }
    ctx.restore();
  }

  return {
    hooks: {
      init,
      draw: (u) => {
        drawLines(u);
        placeRail(u);
      },
      destroy: () => {
        if (rail) rail.remove();
        tip.hide();
      },
    },
  };
}
