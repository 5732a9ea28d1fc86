// The GPU colours of every page: one per GPU, the same on the dashboard's cards and charts and
// in the report. Eight clearly different colours (a qualitative palette: every pair at least 27
// apart in CIEDE2000 in either scheme, lib/palette.js's series colours 18; checked by
// tests/browser/dashboard_detail_checks.mjs), defined once as the CSS custom
// properties --gw-gpu-0 ... --gw-gpu-7 in lib/theme.css, light and dark. A ninth GPU and beyond
// repeat the colours with a dashed line.

import { seriesColor } from './palette.js';

export const kGpuColorCount = 8;

// The colours of the current colour scheme; read again after it changes.
export function readGpuColors(root = document.documentElement) {
  const style = getComputedStyle(root);
  return Array.from({ length: kGpuColorCount }, (_, i) => style.getPropertyValue(`--gw-gpu-${i}`).trim() || seriesColor(i));
}

const slot = (index) => ((index % kGpuColorCount) + kGpuColorCount) % kGpuColorCount;

export function gpuColor(colors, index) {
  return colors[slot(index)];
}

// The CSS value for a card: follows the colour scheme by itself.
export function gpuColorVar(index) {
  return `var(--gw-gpu-${slot(index)})`;
}

// A line pattern for GPUs past the eighth (their colour is taken).
export function gpuDash(index) {
  return index >= kGpuColorCount ? [6, 3] : undefined;
}

// The colour of the charts' dashed threshold lines (--gw-threshold).
export function readThresholdColor(root = document.documentElement) {
  return getComputedStyle(root).getPropertyValue('--gw-threshold').trim() || '#c77c00';
}
