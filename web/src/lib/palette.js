// Colours. Series colours are readable on both the light and the dark background, so a chart
// keeps its colours when the colour scheme changes; everything else comes from CSS variables.

const kSeriesColors = [
  '#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#3ca951',
  '#ff8ab7', '#a463f2', '#97bbf5', '#9c6b4e', '#9498a0',
];

export function seriesColor(i) {
  return kSeriesColors[((i % kSeriesColors.length) + kSeriesColors.length) % kSeriesColors.length];
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
