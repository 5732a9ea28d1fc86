// A set of time charts that share one x axis: the cursor moves in all of them (uPlot sync),
// a zoom in one (drag, double-click, or zoomTo) is applied to all, and they resize together.

import uPlot from 'uplot';

let group_counter = 0;

export class ChartGroup {
  // full_range: [min, max] of the x axis in unix seconds, where a reset returns to.
  constructor(full_range) {
    this.key = `gw-sync-${++group_counter}`;
    this.sync = uPlot.sync(this.key);
    this.full_range = full_range;
    this.charts = [];
    this.zoom_listeners = [];
    this.propagating_ = false;
  }

  // The uPlot hook to put in each member's options (hooks.setScale).
  setScaleHook() {
    return (u, key) => {
      if (key !== 'x' || this.propagating_) return;
      const { min, max } = u.scales.x;
      this.propagating_ = true;
      try {
        for (const other of this.charts) {
          if (other === u) continue;
          const s = other.scales.x;
          if (s.min !== min || s.max !== max) other.setScale('x', { min, max });
        }
      } finally {
        this.propagating_ = false;
      }
      for (const listener of this.zoom_listeners) listener(min, max);
    };
  }

  add(chart) {
    this.charts.push(chart);
  }

  onZoom(listener) {
    this.zoom_listeners.push(listener);
  }

  xRange() {
    const u = this.charts[0];
    return u ? [u.scales.x.min, u.scales.x.max] : this.full_range.slice();
  }

  zoomTo(min, max) {
    const lo = Math.max(this.full_range[0], min);
    const hi = Math.min(this.full_range[1], max);
    if (this.charts.length && hi > lo) this.charts[0].setScale('x', { min: lo, max: hi });
  }

  reset() {
    this.zoomTo(this.full_range[0], this.full_range[1]);
  }

  setWidth(width) {
    for (const u of this.charts) {
      if (u.width !== width) u.setSize({ width, height: u.height });
    }
  }

  destroy() {
    for (const u of this.charts) u.destroy();
    this.charts = [];
  }
}

// Calls back with the element's content width whenever it changes (once per frame at most).
export function observeWidth(element, callback) {
  let frame = 0;
  let last = -1;
  const check = () => {
    frame = 0;
    const width = Math.floor(element.clientWidth);
    if (width > 0 && width !== last) {
      last = width;
      callback(width);
    }
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(check);
  };
  if (typeof ResizeObserver !== 'undefined') {
    const observer = new ResizeObserver(schedule);
    observer.observe(element);
    return () => observer.disconnect();
  }
  window.addEventListener('resize', schedule);
  return () => window.removeEventListener('resize', schedule);
}
