#!/usr/bin/env node
// Builds the front-end assets of the HTML job report and the live dashboard with the esbuild
// JS API.
//
//   node web/build.mjs --outdir DIR [--sample OUT.html [--data REPORT.json]]
//
// DIR/report.js       src/report/report.js bundled with uPlot (IIFE, minified, es2019)
// DIR/report.css      uPlot's CSS + src/report/report.css (minified)
// DIR/report.html     the template the C++ side fills (see README.md, "Template contract")
// DIR/dashboard.js    src/dashboard/dashboard.js bundled with uPlot (IIFE, minified, es2019)
// DIR/dashboard.css   uPlot's CSS + src/dashboard/dashboard.css (minified)
// DIR/dashboard.html  the page `gpuwatch serve` answers at "/" (see README.md, "Dashboard")
// --sample         also assembles a complete report from --data (default
//                  fixtures/report-sample.json) exactly as the C++ side does.
// Same input, same bytes: no timestamps, no absolute paths, no source maps.

import * as esbuild from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const kWebDir = dirname(fileURLToPath(import.meta.url));
const kPlaceholders = ['{{title}}', '/*gpuwatch:css*/', '/*gpuwatch:data*/', '/*gpuwatch:js*/'];

function usage(message) {
  if (message) console.error(`build.mjs: ${message}`);
  console.error('usage: node web/build.mjs --outdir DIR [--sample OUT.html [--data REPORT.json]]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { outdir: null, sample: null, data: join(kWebDir, 'fixtures', 'report-sample.json') };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    const value = argv[i + 1];
    if (!['--outdir', '--sample', '--data'].includes(key)) usage(`unknown argument ${key}`);
    if (value == null || value.startsWith('--')) usage(`${key} needs a value`);
    args[key.slice(2)] = resolve(value);
    i++;
  }
  if (!args.outdir) usage('--outdir is required');
  return args;
}

// Bundles src/NAME/NAME.js; its CSS imports (uPlot's, then NAME.css) come out as NAME.css.
// Returns { 'NAME.js': text, 'NAME.css': text }.
async function bundle(name) {
  const uplotVersion = JSON.parse(readFileSync(join(kWebDir, 'node_modules/uplot/package.json'), 'utf8')).version;
  const notice = `/*! gpuwatch ${name}. Includes uPlot ${uplotVersion}, Copyright (c) Leon Sorokin, MIT License. */`;
  const result = await esbuild.build({
    absWorkingDir: kWebDir,
    entryPoints: [`src/${name}/${name}.js`],
    entryNames: '[name]',
    outdir: 'out',
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2019',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    charset: 'ascii',
    banner: { js: notice, css: notice },
    logLevel: 'warning',
  });
  const files = {};
  for (const file of result.outputFiles) files[file.path.slice(file.path.lastIndexOf('/') + 1)] = file.text;
  if (!files[`${name}.js`] || !files[`${name}.css`]) throw new Error(`unexpected esbuild outputs: ${Object.keys(files)}`);
  return files;
}

// The dashboard page loads its two assets from beside itself (relative URLs, so it also works
// behind a path prefix); it must name each exactly once and nothing else (data: URLs aside).
function checkDashboardPage(html) {
  const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]).filter((u) => !u.startsWith('data:')).sort();
  if (refs.join(' ') !== 'dashboard.css dashboard.js') throw new Error(`dashboard.html must load exactly dashboard.css and dashboard.js, found: ${refs.join(' ')}`);
}

// The assets are pasted inside <script> and <style>; these sequences would end or confuse them.
function checkInlineSafe(name, text) {
  const bad = ['</script', '<!--', '<script', '</style', ...kPlaceholders];
  const lower = text.toLowerCase();
  for (const s of bad) {
    if (lower.includes(s.toLowerCase())) throw new Error(`${name} contains "${s}"; it cannot be inlined`);
  }
}

// As src/report/report_html.cc escapes the title.
export function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

// JSON for <script type="application/json">: every "<" written as \u003c.
export function embedJson(value) {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

// Fills the template in one pass: each placeholder must appear exactly once, and text that is
// substituted is never searched again (a title containing "/*gpuwatch:js*/" stays text).
export function assembleReport(template, { title, css, data, js }) {
  const values = {
    '{{title}}': escapeHtml(title),
    '/*gpuwatch:css*/': css,
    '/*gpuwatch:data*/': data,
    '/*gpuwatch:js*/': js,
  };
  const found = [];
  for (const p of kPlaceholders) {
    const first = template.indexOf(p);
    if (first < 0 || template.indexOf(p, first + 1) >= 0) throw new Error(`template must contain ${p} exactly once`);
    found.push([first, p]);
  }
  found.sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [at, p] of found) {
    out += template.slice(pos, at) + values[p];
    pos = at + p.length;
  }
  return out + template.slice(pos);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const files = await bundle('report');
  const template = readFileSync(join(kWebDir, 'src/report/report.html'), 'utf8');
  checkInlineSafe('report.js', files['report.js']);
  checkInlineSafe('report.css', files['report.css']);
  assembleReport(template, { title: '', css: '', data: '', js: '' }); // validates the template
  files['report.html'] = template;

  Object.assign(files, await bundle('dashboard'));
  files['dashboard.html'] = readFileSync(join(kWebDir, 'src/dashboard/dashboard.html'), 'utf8');
  checkDashboardPage(files['dashboard.html']);

  mkdirSync(args.outdir, { recursive: true });
  for (const name of ['report.js', 'report.css', 'report.html', 'dashboard.js', 'dashboard.css', 'dashboard.html']) {
    writeFileSync(join(args.outdir, name), files[name]);
    console.log(`${join(args.outdir, name)}  ${(Buffer.byteLength(files[name]) / 1024).toFixed(1)} KiB`);
  }

  if (args.sample) {
    const data = JSON.parse(readFileSync(args.data, 'utf8'));
    const html = assembleReport(template, {
      title: data.title || 'gpuwatch report',
      css: files['report.css'],
      data: embedJson(data),
      js: files['report.js'],
    });
    mkdirSync(dirname(args.sample), { recursive: true });
    writeFileSync(args.sample, html);
    console.log(`${args.sample}  ${(Buffer.byteLength(html) / 1024).toFixed(1)} KiB`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`build.mjs: ${e.message}`);
    process.exit(1);
  });
}
