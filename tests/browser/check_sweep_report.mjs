#!/usr/bin/env node
// Headless-browser check of a sweep's HTML page (`gpuwatch sweep --report FILE` or
// `gpuwatch report SWEEP.json`).
//
//   node tests/browser/check_sweep_report.mjs PAGE.html [--screenshot OUT.png] [--dark] [--expect-no-fit]
//
// Opens the file in Debian's chromium ($CHROMIUM, default /usr/bin/chromium) through
// playwright-core from web/node_modules. Fails on any request that is not file: or data:, any
// console or page error, and on a page that does not match the embedded data: the charts and
// how many points each series has, the fit line and the boundary marks drawn on the canvas
// (read back from its pixels), the verdict lines, the runs' table and the DEMO banner.
// Prints "ok - ..." / "not ok - ..." per check and "N passed, M failed"; exit 0 only if all pass.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const kRepo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const kLaunchTimeoutMs = 120000;
const kLoadTimeoutMs = 60000;
const kReadyTimeoutMs = 30000;

function usage(message) {
  console.error(`check_sweep_report: ${message}`);
  console.error('usage: node tests/browser/check_sweep_report.mjs PAGE.html [--screenshot OUT.png] [--dark] [--expect-no-fit]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { page: null, screenshot: null, dark: false, expectNoFit: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--screenshot') {
      args.screenshot = argv[++i];
      if (!args.screenshot) usage('--screenshot needs a file');
    } else if (a === '--dark') args.dark = true;
    else if (a === '--expect-no-fit') args.expectNoFit = true;
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (!args.page) args.page = a;
    else usage(`unexpected argument ${a}`);
  }
  if (!args.page) usage('no page given');
  return args;
}

function embeddedData(html) {
  const m = html.match(/<script type="application\/json" id="gpuwatch-data">([\s\S]*?)<\/script>/);
  if (!m) throw new Error('no <script type="application/json" id="gpuwatch-data"> in the page');
  return JSON.parse(m[1]);
}

const results = { passed: 0, failed: 0 };
function check(ok, name, detail) {
  if (ok) results.passed++;
  else results.failed++;
  console.log(`${ok ? 'ok' : 'not ok'} - ${name}${detail ? ` (${detail})` : ''}`);
  return ok;
}

// What the data says each chart must show, computed here from the document, not by the page.
function expected(data) {
  const fits = (data.runs || []).filter((r) => r.result === 'fits');
  const others = (data.runs || []).filter((r) => r.result !== 'fits');
  const distinct = (runs, key) => new Set(runs.map((r) => r[key])).size;
  if (data.mode === 'concurrency') {
    const marks = {};
    if (data.concurrency && data.concurrency.holds != null) marks.holds = data.concurrency.holds;
    if (others.length) marks['smallest-oom'] = others[0].copies;
    return {
      'sweep-throughput': { series: { total: distinct(fits, 'copies'), 'per-copy': distinct(fits, 'copies') }, marks },
      'sweep-concurrency-memory': { series: { device: distinct(fits, 'copies'), measured: distinct(fits, 'copies') }, marks },
    };
  }
  const series = { measured: distinct(fits, 'value') };
  const framework = fits.filter((r) => r.per_copy[0] && r.per_copy[0].framework_reserved_bytes != null);
  if (framework.length) series.framework = distinct(framework, 'value');
  if (others.length) series.oom = distinct(others, 'value');
  if (data.fit && data.fit.measure === 'needed') {
    series.needed = distinct(fits.filter((r) => r.needed_memory_bytes != null), 'value');
  }
  const marks = {};
  if (data.largest_fitting && data.largest_fitting.value != null) marks.predicted = data.largest_fitting.value;
  if (data.boundary && data.boundary.largest_fit != null) marks['largest-fit'] = data.boundary.largest_fit;
  if (data.boundary && data.boundary.smallest_oom != null) marks['smallest-oom'] = data.boundary.smallest_oom;
  return { 'sweep-memory': { series, marks, fit: data.fit != null } };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const file = resolve(args.page);
  const data = embeddedData(readFileSync(file, 'utf8'));
  const want = expected(data);
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
      viewport: { width: 1360, height: 900 }, deviceScaleFactor: 1,
      colorScheme: args.dark ? 'dark' : 'light', serviceWorkers: 'block',
    });
    const local = (url) => url.startsWith('file:') || url.startsWith('data:');
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (local(url)) return route.continue();
      network.push(url);
      return route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => pageErrors.push(String(err && err.message ? err.message : err)));
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: kLoadTimeoutMs });
    let ready = false;
    try {
      await page.waitForFunction(() => !!(window.gpuwatchReport && window.gpuwatchReport.ready), null, { timeout: kReadyTimeoutMs, polling: 100 });
      ready = true;
    } catch {
      ready = false;
    }
    if (check(ready, 'the sweep page renders (window.gpuwatchReport.ready)', pageErrors[0])) {
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
      const api = await page.evaluate(() => ({ kind: window.gpuwatchReport.kind, noFit: window.gpuwatchReport.noFit, charts: window.gpuwatchReport.charts }));
      check(api.kind === 'sweep', 'the page drew the sweep, not the job report', api.kind);
      const ids = api.charts.map((c) => c.id);
      check(JSON.stringify(ids) === JSON.stringify(Object.keys(want)), 'the charts are the ones the mode calls for', ids.join(', '));
      for (const [id, w] of Object.entries(want)) {
        const c = api.charts.find((x) => x.id === id);
        if (!check(c && c.drawn, `chart ${id} is drawn with every series`)) continue;
        for (const [kind, n] of Object.entries(w.series)) {
          const s = c.series.filter((x) => x.kind === kind);
          const counts = s.map((x) => x.points);
          check(s.length > 0 && counts.every((k) => k === n), `chart ${id}: series ${kind} has ${n} point(s)`, `has ${counts.join(', ') || 'no such series'}`);
        }
        for (const kind of ['oom', 'framework']) {
          if (!(kind in w.series) && id === 'sweep-memory') {
            check(!c.series.some((x) => x.kind === kind), `chart ${id}: no ${kind} series when the data has none`);
          }
        }
        if ('fit' in w) {
          const fit = c.series.find((x) => x.kind === 'fit');
          check(w.fit ? fit && fit.points > 10 : !fit, w.fit ? `chart ${id}: the fitted curve is there` : `chart ${id}: no fitted curve without a fit`, fit ? `${fit.points} points` : 'none');
          const budget = c.series.find((x) => x.kind === 'budget');
          check(budget && budget.points > 1, `chart ${id}: the budget line is there`);
        }
        const marks = Object.fromEntries(c.marks.map((m) => [m.kind, m.x]));
        check(JSON.stringify(Object.keys(marks).sort()) === JSON.stringify(Object.keys(w.marks).sort())
          && Object.entries(w.marks).every(([k, x]) => marks[k] === x), `chart ${id}: the marks are ${JSON.stringify(w.marks)}`, JSON.stringify(marks));
        // The pixels: each mark's vertical line and the fit line are on the canvas.
        const drawn = await page.evaluate((chartId) => window.gpuwatchReport.pixels(chartId), id);
        for (const m of drawn.marks) {
          check(m.hits >= 20, `chart ${id}: the ${m.kind} mark at ${m.x} is drawn`, `${m.hits} pixels of ${m.color} in its column`);
        }
        if (drawn.fit) check(drawn.fit.hits >= 3, `chart ${id}: the fit line is drawn on the canvas`, `${drawn.fit.hits} pixels of ${drawn.fit.color} around its midpoint`);
      }
      const dom = await page.evaluate(() => ({
        rows: document.querySelectorAll('#gw-sweep-runs tbody tr').length,
        verdict: (document.querySelector('#gw-sweep-verdict') || {}).textContent || '',
        noFit: !!document.querySelector('#gw-sweep-nofit') && document.querySelector('#gw-sweep-nofit').offsetHeight > 0,
        demo: !!document.querySelector('#gw-demo') && document.querySelector('#gw-demo').offsetHeight > 0,
      }));
      check(dom.rows === data.runs.length, `the runs' table has ${data.runs.length} rows`, `${dom.rows}`);
      const lines = data.verdict || [];
      check(lines.length > 0 && lines.every((l) => dom.verdict.includes(l)), 'the verdict shows every line the terminal prints', JSON.stringify(lines[0] || ''));
      check(dom.noFit === args.expectNoFit && api.noFit === args.expectNoFit,
        args.expectNoFit ? 'the page says there is no memory fit' : 'the page shows no "no fit" note', dom.verdict.slice(0, 100));
      check(dom.demo === !!data.demo, data.demo ? 'the DEMO banner is shown' : 'no DEMO banner');
      if (args.screenshot) await page.screenshot({ path: args.screenshot, fullPage: true });
    }
  } finally {
    await browser.close();
  }
  check(network.length === 0, 'no request leaves the file', network.slice(0, 3).join(' '));
  check(consoleErrors.length === 0, 'no console errors', consoleErrors.slice(0, 3).join(' | '));
  check(pageErrors.length === 0, 'no page errors', pageErrors.slice(0, 3).join(' | '));
  console.log(`${results.passed} passed, ${results.failed} failed`);
  process.exit(results.failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(`check_sweep_report: ${e.stack || e}`);
  process.exit(1);
});
