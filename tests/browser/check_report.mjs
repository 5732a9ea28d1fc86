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
          demo: !!document.querySelector('#gw-demo') && document.querySelector('#gw-demo').offsetHeight > 0,
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

      await interact(page, data, r);
    }

    if (args.screenshot) {
      await page.mouse.move(1, 1);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: args.screenshot, fullPage: true });
    }
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
