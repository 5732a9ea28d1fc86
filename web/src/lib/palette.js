// Colours. Series colours are readable on both the light and the dark background, so a chart
// keeps its colours when the colour scheme changes; everything else comes from CSS variables.

const kSeriesColors = [
  '#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#3ca951',
  '#ff8ab7', '#a463f2', '#97bbf5', '#9c6b4e', '#9498a0',
];

export function seriesColor(i) {
  return kSeriesColors[((i % kSeriesColors.length) + kSeriesColors.length) % kSeriesColors.length];
}

// A process wears its GPU's colour: the GPU's series colour, a shade lighter or darker, and
// past three processes on one GPU a dash pattern. The shades stay nearer to their GPU's colour
// than to any other series colour, so no process looks like it runs on another GPU.
// (Framework series use the GPU's colour dotted [2, 3] and dashed [7, 4].)
const kShadeSteps = [0, -0.1, 0.1];
const kProcessDashes = [null, [10, 3, 2, 3], [14, 5]];

export function processStyle(gpuColor, k) {
  const n = kShadeSteps.length;
  return {
    color: shadeColor(gpuColor, kShadeSteps[k % n]),
    dash: kProcessDashes[Math.floor(k / n) % kProcessDashes.length],
  };
}

// #rrggbb with its HSL lightness moved by `step` (-1..1); the hue stays.
export function shadeColor(hex, step) {
  if (!step) return hex;
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const l = (max + min) / 2;
  const d = max - min;
  let h = 0;
  let s = 0;
  if (d > 0) {
    s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
    if (max === r) h = (g - b) / d + (g < b ? 6 : 0);
    else if (max === g) h = (b - r) / d + 2;
    else h = (r - g) / d + 4;
    h *= 60;
  }
  const l2 = Math.min(0.9, Math.max(0.12, l + step));
  const c = (1 - Math.abs(2 * l2 - 1)) * s;
  const x = c * (1 - Math.abs(((h / 60) % 2) - 1));
  const m = l2 - c / 2;
  const sector = Math.floor(h / 60) % 6;
  const [r1, g1, b1] = [[c, x, 0], [x, c, 0], [0, c, x], [0, x, c], [x, 0, c], [c, 0, x]][sector];
  const hex2 = (v) => Math.round((v + m) * 255).toString(16).padStart(2, '0');
  return `#${hex2(r1)}${hex2(g1)}${hex2(b1)}`;
}

export const kSeverities = ['info', 'warning', 'critical'];

// Reads the theme from the CSS custom properties on :root (see report.css). Call again after
// the colour scheme changes.
export function readTheme(root = document.documentElement) {
  const style = getComputedStyle(root);
  const v = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: v('--gw-text', '#1f2328'),
    muted: v('--gw-muted', '#656d76'),
    axis: v('--gw-axis', '#656d76'),
    grid: v('--gw-grid', 'rgba(0,0,0,0.07)'),
    background: v('--gw-surface', '#ffffff'),
    font: v('--gw-chart-font', '11px system-ui, sans-serif'),
    severity: {
      info: v('--gw-sev-info', '#3b82f6'),
      warning: v('--gw-sev-warning', '#d97706'),
      critical: v('--gw-sev-critical', '#dc2626'),
    },
  };
}

// Calls back when prefers-color-scheme flips; returns a function that stops listening.
export function onColorSchemeChange(callback) {
  if (!window.matchMedia) return () => {};
  const query = window.matchMedia('(prefers-color-scheme: dark)');
  const listener = () => callback();
  if (query.addEventListener) query.addEventListener('change', listener);
  else query.addListener(listener);
  return () => (query.removeEventListener ? query.removeEventListener('change', listener) : query.removeListener(listener));
}
