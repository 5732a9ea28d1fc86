#!/usr/bin/env node
// Headless-browser check of a gpuwatch HTML report (the file `gpuwatch report` writes, or the
// sample from `node web/build.mjs --sample`).
//
//   node tests/browser/check_report.mjs REPORT.html [--screenshot OUT.png] [--dark]
//                                       [--expect-empty CHART_ID ...]
//
// Opens the file in Debian's chromium ($CHROMIUM, default /usr/bin/chromium) through
// playwright-core from web/node_modules. Fails on any request that is not file: or data:, any
// console error or page error, and on report content that does not match the embedded data.
// Prints "ok - ..." / "not ok - ..." per check and "N passed, M failed"; exit 0 only if all pass.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const kRepo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const kChartIds = ['memory-gpu', 'memory-process', 'utilization', 'power', 'temperature'];
const kValuePattern = /\d(\.\d+)? ?(GiB|%|W|\u00b0C)/;
// CI has two slow cores: be generous.
const kLaunchTimeoutMs = 120000;
const kLoadTimeoutMs = 60000;
const kReadyTimeoutMs = 30000;
const kStepTimeoutMs = 15000;
const kGiveUpAfterErrorMs = 5000;

function usage(message) {
  console.error(`check_report: ${message}`);
  console.error('usage: node tests/browser/check_report.mjs REPORT.html [--screenshot OUT.png] [--dark] [--expect-empty CHART_ID ...]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { report: null, screenshot: null, dark: false, expectEmpty: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--screenshot') {
      args.screenshot = argv[++i];
      if (!args.screenshot) usage('--screenshot needs a file');
    } else if (a === '--dark') {
      args.dark = true;
    } else if (a === '--expect-empty') {
      const start = i;
      while (argv[i + 1] != null && !argv[i + 1].startsWith('--')) args.expectEmpty.push(argv[++i]);
      if (i === start) usage('--expect-empty needs at least one chart id');
    } else if (a.startsWith('--')) {
      usage(`unknown option ${a}`);
    } else if (!args.report) {
      args.report = a;
    } else {
      usage(`unexpected argument ${a}`);
    }
  }
  if (!args.report) usage('no report file given');
  return args;
}

// The data as the page should see it: the JSON in #gpuwatch-data.
function embeddedData(html) {
  const m = html.match(/<script type="application\/json" id="gpuwatch-data">([\s\S]*?)<\/script>/);
  if (!m) throw new Error('no <script type="application/json" id="gpuwatch-data"> in the report');
  return JSON.parse(m[1]);
}

class Results {
  constructor() {
    this.passed = 0;
    this.failed = 0;
  }

  check(ok, name, detail) {
    if (ok) this.passed++;
    else this.failed++;
    console.log(`${ok ? 'ok' : 'not ok'} - ${name}${detail ? ` (${detail})` : ''}`);
    return ok;
  }
}

const sameRange = (a, b, eps) => Math.abs(a[0] - b[0]) <= eps && Math.abs(a[1] - b[1]) <= eps;

async function waitForRanges(page, predicate, arg) {
  try {
    await page.waitForFunction(predicate, arg, { timeout: kStepTimeoutMs, polling: 100 });
    return true;
  } catch {
    return false;
  }
}

async function interact(page, data, r) {
  const api = await page.evaluate(() => ({ charts: window.gpuwatchReport.charts, full: window.gpuwatchReport.fullRange }));
  const drawn = api.charts.filter((c) => c.nonNull > 0);
  // Nothing to hover or zoom; the chart checks have already failed unless that was expected.
  if (drawn.length === 0) return;
  const first = drawn[0];
  // In the middle of the viewport, clear of the sticky toolbar.
  await page.locator(`#gw-chart-${first.id}`).evaluate((card) => card.scrollIntoView({ block: 'center' }));
  const over = page.locator(`#gw-chart-${first.id} .u-over`);
  const box = await over.boundingBox();
  if (!r.check(box != null && box.width > 100 && box.height > 50, `chart ${first.id} has a plot area`, box ? `${Math.round(box.width)}x${Math.round(box.height)} px` : 'not found')) return;
  const y = box.y + box.height / 2;
  const at = (f) => box.x + box.width * f;

  // Hover: the tooltip must show a value in the chart's unit.
  let tipText = '';
  for (const f of [0.5, 0.35, 0.65, 0.2, 0.8]) {
    await page.mouse.move(at(f) - 20, y);
    await page.mouse.move(at(f), y, { steps: 4 });
    try {
      await page.waitForSelector('.gw-tip-cursor:not([hidden])', { timeout: 3000 });
      tipText = await page.locator('.gw-tip-cursor').innerText();
    } catch {
      tipText = '';
    }
    if (kValuePattern.test(tipText)) break;
  }
  r.check(kValuePattern.test(tipText), `hovering chart ${first.id} shows a value in the tooltip`, JSON.stringify(tipText.split('\n').slice(0, 3).join(' | ').slice(0, 100)));

  // Hovering an annotation marker shows the annotation's text.
  // A marker can be outside the plot (a mark sent before the first sample): take the first one
  // laid out; there must be one when an annotation falls inside the sampled time range.
  const markers = page.locator(`#gw-chart-${first.id} .gw-ann`);
  let m = null;
  for (let i = 0; i < (await markers.count()) && !m; i++) {
    const box = await markers.nth(i).boundingBox();
    if (box && box.width > 0 && box.height > 0) m = box;
  }
  const times = data.t || [];
  const inside = (data.annotations || []).some((a) => times.length && a.t >= times[0] && a.t <= times[times.length - 1]);
  if (inside) r.check(m !== null, `an annotation marker on ${first.id} is laid out where it can be hovered`, m ? '' : 'none has a box');
  if (m) {
    await page.mouse.move(m.x + m.width / 2, m.y + m.height / 2, { steps: 3 });
    let text = '';
    try {
      await page.waitForSelector('.gw-tip-annotation:not([hidden])', { timeout: 3000 });
      text = await page.locator('.gw-tip-annotation').innerText();
    } catch {
      text = '';
    }
    const known = (data.annotations || []).some((a) => a.text && text.includes(String(a.text).trim().slice(0, 40)));
    r.check(known, `hovering an annotation marker on ${first.id} shows its text`, JSON.stringify(text.replace(/\s+/g, ' ').slice(0, 100)));
  }

  // Drag to zoom: every chart follows.
  await page.mouse.move(at(0.3), y);
  await page.mouse.down();
  await page.mouse.move(at(0.45), y, { steps: 5 });
  await page.mouse.move(at(0.6), y, { steps: 5 });
  await page.mouse.up();
  const zoomed = await waitForRanges(page, (full) => {
    const ranges = window.gpuwatchReport.xRanges();
    return ranges.length > 0 && ranges.every((x) => x[0] > full[0] && x[1] < full[1] && x[0] === ranges[0][0] && x[1] === ranges[0][1]);
  }, api.full);
  const afterDrag = await page.evaluate(() => window.gpuwatchReport.xRanges());
  const span = (x) => (x ? (x[1] - x[0]).toFixed(1) : '?');
  r.check(zoomed, `dragging across ${first.id} zooms all ${afterDrag.length} charts together`, `visible ${span(afterDrag[0])} s of ${span(api.full)} s`);

  // Double-click resets every chart to the whole run.
  await page.mouse.dblclick(at(0.5), y);
  const reset = await waitForRanges(page, (full) => window.gpuwatchReport.xRanges().every((x) => x[0] === full[0] && x[1] === full[1]), api.full);
  r.check(reset, 'double-click resets the zoom of all charts');

  // Clicking an event row zooms to ±5 % around it; the reset button returns.
  const rows = page.locator('#gw-events tbody tr');
  const n = await rows.count();
  if (n > 0) {
    const events = [...data.annotations].filter((a) => typeof a.t === 'number').sort((a, b) => a.t - b.t);
    const k = Math.floor(n / 2);
    await rows.nth(k).click();
    const t = events[k].t;
    const half = (api.full[1] - api.full[0]) * 0.05;
    const want = [Math.max(api.full[0], t - half), Math.min(api.full[1], t + half)];
    const ok = await waitForRanges(page, (w) => window.gpuwatchReport.xRanges().every((x) => Math.abs(x[0] - w[0]) < 1e-6 && Math.abs(x[1] - w[1]) < 1e-6), want);
    r.check(ok, 'clicking an event row zooms all charts to \u00b15 % around it');
    await page.locator('.gw-toolbar button').click();
    const back = await waitForRanges(page, (full) => window.gpuwatchReport.xRanges().every((x) => x[0] === full[0] && x[1] === full[1]), api.full);
    r.check(back, "the Reset zoom button shows the whole run again");
  }
  await page.mouse.move(1, 1);
}

// Colours as the browser computes them ("rgb(66, 105, 208)" or "#4269d0") -> [r, g, b].
function parseColor(text) {
  const s = String(text || '').trim();
  let m = s.match(/^#([0-9a-f]{6})$/i);
  if (m) return [0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16));
  m = s.match(/^rgba?\((\d+),\s*(\d+),\s*(\d+)/);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function hueOf([r, g, b]) {
  const [R, G, B] = [r / 255, g / 255, b / 255];
  const max = Math.max(R, G, B);
  const d = max - Math.min(R, G, B);
  if (d < 0.08) return null; // grey: no hue to speak of
  const h = max === R ? ((G - B) / d + 6) % 6 : max === G ? (B - R) / d + 2 : (R - G) / d + 4;
  return h * 60;
}

// CIE L*a*b* (D65), for "which colour does this look like".
function lab(rgb) {
  const f = (v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const [r, g, b] = rgb.map(f);
  const x = (r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047;
  const y = r * 0.2126 + g * 0.7152 + b * 0.0722;
  const z = (r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883;
  const F = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * F(y) - 16, 500 * (F(x) - F(y)), 200 * (F(y) - F(z))];
}
const colorDistance = (a, b) => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]));
const sameColor = (a, b) => a && b && a.every((v, i) => Math.abs(v - b[i]) <= 1);
const hueGap = (a, b) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));

// One colour per GPU on every chart (and in the GPU table); every process in a shade of its
// own GPU's colour (same hue, nearer to it than to any other GPU's); framework series in
// their GPU's colour. What is checked is what the legend draws.
function checkColors(api, legends, swatches) {
  const gpuColor = new Map(Object.entries(swatches).map(([gpu, c]) => [Number(gpu), parseColor(c)]));
  const wrong = { gpu: [], process: [], framework: [] };
  let processes = 0;
  const hooked = api.charts.every((c) => Array.isArray(c.seriesInfo));
  if (!r.check(hooked, 'the test hook describes each chart\'s series (seriesInfo)')) return;
  for (const chart of api.charts) {
    const rows = legends[chart.id] || [];
    chart.seriesInfo.forEach((s, i) => {
      const drawn = parseColor(rows[i] && rows[i].color);
      const own = gpuColor.get(s.gpu);
      const where = `${chart.id} "${s.label}" ${rows[i] ? rows[i].color : 'no legend entry'}`;
      if (s.kind === 'gpu' || (s.kind === 'reference' && s.gpu != null)) {
        if (!sameColor(drawn, own)) wrong.gpu.push(`${where}, GPU table ${swatches[s.gpu]}`);
      } else if (s.kind === 'framework') {
        if (!sameColor(drawn, own)) wrong.framework.push(`${where}, GPU ${s.gpu} ${swatches[s.gpu]}`);
      } else if (s.kind === 'process') {
        processes++;
        if (!drawn || !own) {
          wrong.process.push(where);
          return;
        }
        const hue = hueOf(drawn);
        const ownHue = hueOf(own);
        const sameHue = hue == null ? ownHue == null : ownHue != null && hueGap(hue, ownHue) <= 4;
        const d = colorDistance(drawn, own);
        const closer = [...gpuColor].filter(([g, c]) => g !== s.gpu && c && !sameColor(c, own))
          .find(([, c]) => colorDistance(drawn, c) <= d);
        if (!sameHue || closer) {
          wrong.process.push(`${where} on GPU ${s.gpu} (${swatches[s.gpu]})${closer ? ` looks like GPU ${closer[0]}'s ${swatches[closer[0]]}` : ', another hue'}`);
        }
      }
    });
  }
  r.check(wrong.gpu.length === 0, 'each GPU has one colour on every chart and in the GPU table', wrong.gpu.slice(0, 3).join('; ') || null);
  r.check(processes > 0 ? wrong.process.length === 0 : true, `each of ${processes} process series wears a shade of its own GPU's colour`, wrong.process.slice(0, 3).join('; ') || null);
  r.check(wrong.framework.length === 0, "framework series are drawn in their GPU's colour", wrong.framework.slice(0, 3).join('; ') || null);
}

// A process's legend entry names its pid, user and command.
function checkProcessLegend(api, legends, data) {
  const chart = api.charts.find((c) => c.id === 'memory-process');
  if (!chart || !Array.isArray(chart.seriesInfo)) return;
  const rows = legends[chart.id] || [];
  const bad = [];
  let n = 0;
  chart.seriesInfo.forEach((s, i) => {
    if (s.kind !== 'process') return;
    n++;
    const p = (data.process_series || []).find((x) => x.gpu === s.gpu && x.pid === s.pid);
    const text = rows[i] ? rows[i].label : '';
    const command = p && p.command ? p.command.slice(0, 20) : '';
    const title = rows[i] ? rows[i].title : '';
    if (!p || !text.includes(`pid ${p.pid}`) || (p.user && !text.includes(` ${p.user} `)) || !text.includes(command)
        || !title.includes(`pid ${p.pid}`) || !title.includes(p.command || '')) {
      bad.push(`${JSON.stringify(text)} (hover title ${JSON.stringify(title.slice(0, 60))})` + (p ? ` for pid ${p.pid} ${p.user} ${command}` : ' (no such process in the data)'));
    }
  });
  if (n > 0) r.check(bad.length === 0, `the legend entry of each of ${n} processes shows pid, user and command (its hover title the whole command)`, bad.slice(0, 3).join('; ') || null);
}

// Summary rows: one label, one value each, as in the data; alerts and diagnoses each a row of
// its own; a recording (not a run) never speaks of a job.
function checkSummary(data, shown) {
  const rows = data.summary || [];
  const same = shown.length === rows.length && shown.every((s, i) => s.cells === 2 && s.label === String(rows[i][0]) && s.value === String(rows[i][1]));
  r.check(same, 'each summary row shows its label and its value, each in a cell of its own', same ? null : JSON.stringify(shown.find((s, i) => s.cells !== 2 || !rows[i] || s.label !== String(rows[i][0]) || s.value !== String(rows[i][1]))).slice(0, 160));
  const byLabel = (l) => rows.find(([label]) => label === l);
  if (byLabel('alerts') || byLabel('diagnoses')) {
    // The row's fact is its first line; the alerts (diagnoses) themselves follow, one a line.
    const ok = ['alerts', 'diagnoses'].every((l) => byLabel(l) && /^\d+(\n- |$)/.test(String(byLabel(l)[1])));
    r.check(ok, 'alerts and diagnoses are separate summary rows, each a count', JSON.stringify([byLabel('alerts'), byLabel('diagnoses')]));
  }
  if (data.source !== 'run' && rows.length) {
    const jobby = rows.find(([l, v]) => /\bjob\b/i.test(`${l} ${v}`));
    r.check(!jobby, `the summary of a recording (${data.source}) does not speak of a job`, jobby ? JSON.stringify(jobby) : null);
  }
}

// At a phone's width, no environment variable name is broken across lines.
async function checkNamesDoNotBreak(page, data) {
  const env = (data.job && data.job.environment) || {};
  await page.setViewportSize({ width: 360, height: 800 });
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const names = await page.evaluate(() => [...document.querySelectorAll('.gw-env-name')].map((e) => ({
    text: e.textContent, lines: e.getClientRects().length, table: !!e.closest('#gw-env'),
  })));
  const inTable = names.filter((x) => x.table).map((x) => x.text);
  const missing = Object.keys(env).filter((k) => !inTable.includes(k));
  r.check(missing.length === 0, `the environment table lists ${Object.keys(env).length} variables`, missing.join(', ') || null);
  if (names.length > 0) {
    const broken = names.filter((x) => x.lines !== 1);
    r.check(broken.length === 0, `at 360 px wide, none of ${names.length} environment variable names breaks across lines`,
      broken.slice(0, 3).map((x) => `${x.text}: ${x.lines} line boxes`).join('; ') || null);
  }
}

const r = new Results();

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const file = resolve(args.report);
  const data = embeddedData(readFileSync(file, 'utf8'));
  const expected = {
    annotations: (data.annotations || []).filter((a) => a && typeof a.t === 'number').length,
    summary: (data.summary || []).length,
    demo: data.demo != null,
  };
  const require = createRequire(join(kRepo, 'web', 'package.json'));
  const { chromium } = require('playwright-core');

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    timeout: kLaunchTimeoutMs,
  });
  const network = [];
  const consoleErrors = [];
  const pageErrors = [];
  try {
    const context = await browser.newContext({
      viewport: { width: 1360, height: 900 },
      deviceScaleFactor: 1,
      colorScheme: args.dark ? 'dark' : 'light',
      serviceWorkers: 'block',
    });
    const local = (url) => url.startsWith('file:') || url.startsWith('data:');
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (local(url)) return route.continue();
      if (!network.includes(url)) network.push(url);
      return route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    page.setDefaultTimeout(kStepTimeoutMs);
    page.on('request', (req) => {
      if (!local(req.url()) && !network.includes(req.url())) network.push(req.url());
    });
    page.on('websocket', (ws) => network.push(ws.url()));
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => pageErrors.push(String(err && err.message ? err.message : err)));

    await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: kLoadTimeoutMs });
    // Wait for ready; stop early when an uncaught exception left the page unrendered.
    const started = Date.now();
    let ready = false;
    let firstError = 0;
    while (Date.now() - started < kReadyTimeoutMs) {
      ready = await page.evaluate(() => !!(window.gpuwatchReport && window.gpuwatchReport.ready === true));
      if (ready) break;
      if (pageErrors.length && !firstError) firstError = Date.now();
      if (firstError && Date.now() - firstError > kGiveUpAfterErrorMs) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    const waited = ((Date.now() - started) / 1000).toFixed(1);
    if (r.check(ready, 'report renders (window.gpuwatchReport.ready)', ready ? null : `not ready after ${waited} s`)) {
      const api = await page.evaluate(() => ({ ...window.gpuwatchReport, xRanges: undefined }));
      const dom = await page.evaluate(() => {
        const cards = {};
        for (const card of document.querySelectorAll('[data-chart-id]')) {
          cards[card.dataset.chartId] = {
            plot: !!card.querySelector('.uplot'),
            noData: !!card.querySelector('.gw-nodata'),
            markers: card.querySelectorAll('.gw-ann').length,
          };
        }
        return {
          cards,
          eventRows: document.querySelectorAll('#gw-events tbody tr').length,
          summaryRows: document.querySelectorAll('#gw-summary .gw-kv').length,
          summary: [...document.querySelectorAll('#gw-summary .gw-kv')].map((row) => ({
            cells: row.children.length,
            label: row.querySelector('.gw-k') ? row.querySelector('.gw-k').textContent : null,
            value: row.querySelector('.gw-v') ? row.querySelector('.gw-v').textContent : null,
          })),
          // Each chart's legend entries of data series (those with a marker): label, marker colour.
          legends: Object.fromEntries([...document.querySelectorAll('[data-chart-id]')].map((card) => [
            card.dataset.chartId,
            [...card.querySelectorAll('.u-legend .u-series')].filter((row) => row.querySelector('.u-marker')).map((row) => ({
              label: (row.querySelector('.u-label') || row).textContent,
              title: row.title || '',
              color: row.querySelector('.u-marker') ? getComputedStyle(row.querySelector('.u-marker')).borderBottomColor : null,
            })),
          ])),
          swatches: Object.fromEntries([...document.querySelectorAll('.gw-devices tr')].map((tr) => {
            const m = tr.textContent.match(/GPU (\d+)/);
            const sw = tr.querySelector('.gw-swatch');
            return [m ? m[1] : '?', sw ? getComputedStyle(sw).backgroundColor : null];
          })),
          demo: !!document.querySelector('#gw-demo') && document.querySelector('#gw-demo').offsetHeight > 0,
          // The pages' shared GPU colours (lib/theme.css --gw-gpu-N, which the dashboard's cards
          // and charts wear), resolved in this colour scheme.
          theme: (() => {
            const probe = document.body.appendChild(document.createElement('span'));
            const out = Object.fromEntries([...Array(8).keys()].map((i) => {
              probe.style.color = `var(--gw-gpu-${i})`;
              return [i, getComputedStyle(probe).color];
            }));
            probe.remove();
            return out;
          })(),
        };
      });

      for (const id of args.expectEmpty) {
        if (!api.charts.some((c) => c.id === id)) r.check(false, `--expect-empty ${id} names a chart`, `charts: ${api.charts.map((c) => c.id).join(', ')}`);
      }
      const ids = api.charts.map((c) => c.id).join(',');
      r.check(ids === kChartIds.join(','), 'the report has the five charts', ids);
      for (const c of api.charts) {
        const card = dom.cards[c.id] || {};
        if (args.expectEmpty.includes(c.id)) {
          r.check(c.nonNull === 0 && card.noData && !card.plot, `chart ${c.id} is empty and says "no data recorded"`, `nonNull ${c.nonNull}`);
        } else {
          r.check(c.series >= 1 && c.nonNull > 0 && card.plot && !card.noData, `chart ${c.id} is drawn with data`, `series ${c.series}, points ${c.points}, nonNull ${c.nonNull}`);
        }
      }

      const drawnCards = Object.values(dom.cards).filter((card) => card.plot);
      const markerCounts = drawnCards.map((card) => card.markers);
      r.check(api.annotations === expected.annotations && dom.eventRows === expected.annotations
        && markerCounts.every((m) => m === expected.annotations),
      `annotations: ${expected.annotations} in the data, on every chart and in the events table`,
      `api ${api.annotations}, markers per chart [${markerCounts.join(', ')}], event rows ${dom.eventRows}`);
      r.check(api.summaryRows === expected.summary && dom.summaryRows === expected.summary,
        `summary: ${expected.summary} rows`, `api ${api.summaryRows}, shown ${dom.summaryRows}`);
      r.check(dom.demo === expected.demo, expected.demo ? `DEMO banner shown (demo "${data.demo}")` : 'no DEMO banner (demo is null)', dom.demo ? 'banner present' : 'banner absent');

      checkSummary(data, dom.summary);
      // Legends of charts drawn (an empty chart has none).
      const drawnApi = { charts: api.charts.filter((c) => dom.cards[c.id] && dom.cards[c.id].plot) };
      checkColors(drawnApi, dom.legends, dom.swatches);
      const offPalette = Object.entries(dom.swatches).filter(([gpu, c]) => !sameColor(parseColor(c), parseColor(dom.theme[Number(gpu) % 8])))
        .map(([gpu, c]) => `GPU ${gpu} ${c}, the dashboard's ${dom.theme[Number(gpu) % 8]}`);
      r.check(Object.keys(dom.swatches).length > 0 && offPalette.length === 0, "each GPU wears the dashboard's colour for it (lib/theme.css --gw-gpu-N)", offPalette.slice(0, 3).join('; ') || null);
      checkProcessLegend(drawnApi, dom.legends, data);

      await interact(page, data, r);
    }

    if (args.screenshot) {
      await page.mouse.move(1, 1);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: args.screenshot, fullPage: true });
    }
    if (ready) await checkNamesDoNotBreak(page, data);
    r.check(network.length === 0, 'no network requests (only file: and data:)', network.slice(0, 5).join(' ') || null);
    r.check(consoleErrors.length === 0, 'no console errors', consoleErrors.slice(0, 3).join(' | ').slice(0, 300) || null);
    r.check(pageErrors.length === 0, 'no page errors (uncaught exceptions)', pageErrors.slice(0, 3).join(' | ').slice(0, 300) || null);
  } finally {
    await browser.close();
  }
}

main()
  .catch((e) => r.check(false, 'the check itself ran to the end', String(e && e.stack ? e.stack : e)))
  .finally(() => {
    console.log(`${r.passed} passed, ${r.failed} failed`);
    process.exitCode = r.failed === 0 ? 0 : 1;
  });
