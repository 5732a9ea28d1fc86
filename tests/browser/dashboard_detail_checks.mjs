// The dashboard checks of what a card and a chart say, for check_dashboard.mjs: the first paint
// before any API answer (connecting, DEMO), each card's status against everything the snapshot
// says of its GPU (and the status rules on made-up snapshots), the top memory holders, MIG
// instances and why values are N/A, the process table at 800 px, and the charts' y spans,
// threshold lines and GPU colours (CIEDE2000, both colour schemes).
//
// Each function takes a Results (r.check / r.problems / r.note) and a playwright page.

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const kRank = { ok: 0, info: 1, warning: 2, stale: 3, critical: 4, lost: 5 };
const kGiB = 1024 ** 3;
// Eight GPU colours must differ at least this much (CIEDE2000; ~2 is a just noticeable
// difference). lib/palette.js's series colours, which users found hard to tell apart as eight
// thin lines, have a closest pair 18.4 apart (#4269d0 / #a463f2).
const kMinColorDelta = 25;

// --- Colour difference --------------------------------------------------------------------

function parseColor(text) {
  const s = String(text).trim();
  let m = /^#([0-9a-f]{6})$/i.exec(s);
  if (m) return [0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16));
  m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)/i.exec(s);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  return null;
}

function toLab([r, g, b]) {
  const lin = (c) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const x = f((R * 0.4124 + G * 0.3576 + B * 0.1805) / 0.95047);
  const y = f(R * 0.2126 + G * 0.7152 + B * 0.0722);
  const z = f((R * 0.0193 + G * 0.1192 + B * 0.9505) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

// CIEDE2000 (Sharma, Wu, Dalal 2005).
export function deltaE2000(lab1, lab2) {
  const [L1, a1, b1] = lab1;
  const [L2, a2, b2] = lab2;
  const rad = Math.PI / 180;
  const Cbar = (Math.hypot(a1, b1) + Math.hypot(a2, b2)) / 2;
  const G = 0.5 * (1 - Math.sqrt(Cbar ** 7 / (Cbar ** 7 + 25 ** 7)));
  const a1p = (1 + G) * a1;
  const a2p = (1 + G) * a2;
  const C1p = Math.hypot(a1p, b1);
  const C2p = Math.hypot(a2p, b2);
  const hue = (b, a) => (a === 0 && b === 0 ? 0 : (Math.atan2(b, a) / rad + 360) % 360);
  const h1p = hue(b1, a1p);
  const h2p = hue(b2, a2p);
  let dh = 0;
  if (C1p * C2p !== 0) {
    dh = h2p - h1p;
    if (dh > 180) dh -= 360;
    else if (dh < -180) dh += 360;
  }
  const dL = L2 - L1;
  const dC = C2p - C1p;
  const dH = 2 * Math.sqrt(C1p * C2p) * Math.sin((dh * rad) / 2);
  const Lb = (L1 + L2) / 2;
  const Cbp = (C1p + C2p) / 2;
  let hb = h1p + h2p;
  if (C1p * C2p !== 0) hb = Math.abs(h1p - h2p) > 180 ? (h1p + h2p < 360 ? (h1p + h2p + 360) / 2 : (h1p + h2p - 360) / 2) : (h1p + h2p) / 2;
  const T = 1 - 0.17 * Math.cos((hb - 30) * rad) + 0.24 * Math.cos(2 * hb * rad) + 0.32 * Math.cos((3 * hb + 6) * rad) - 0.2 * Math.cos((4 * hb - 63) * rad);
  const dTheta = 30 * Math.exp(-(((hb - 275) / 25) ** 2));
  const Rc = 2 * Math.sqrt(Cbp ** 7 / (Cbp ** 7 + 25 ** 7));
  const Sl = 1 + (0.015 * (Lb - 50) ** 2) / Math.sqrt(20 + (Lb - 50) ** 2);
  const Sc = 1 + 0.045 * Cbp;
  const Sh = 1 + 0.015 * Cbp * T;
  const Rt = -Math.sin(2 * dTheta * rad) * Rc;
  return Math.sqrt((dL / Sl) ** 2 + (dC / Sc) ** 2 + (dH / Sh) ** 2 + Rt * (dC / Sc) * (dH / Sh));
}

// The closest pair of colours: { delta, pair } (delta Infinity for fewer than two).
export function closestColors(colors) {
  const labs = colors.map((c) => {
    const rgb = parseColor(c);
    return rgb ? toLab(rgb) : null;
  });
  let best = { delta: Infinity, pair: [] };
  for (let i = 0; i < labs.length; i++) {
    for (let j = i + 1; j < labs.length; j++) {
      if (!labs[i] || !labs[j]) return { delta: NaN, pair: [colors[i], colors[j]] };
      const d = deltaE2000(labs[i], labs[j]);
      if (d < best.delta) best = { delta: d, pair: [colors[i], colors[j]] };
    }
  }
  return best;
}

// --- 5. The first paint, before any API answer --------------------------------------------

// Opens the page with dashboard.js and the API held back: the served HTML alone must say
// "connecting" (and DEMO on a demo server); then with the script running and the API still
// held, the same; then lets everything through and waits for the page to be ready.
export async function checkFirstPaint(context, base, r, demo) {
  const page = await context.newPage();
  const answered = [];
  page.on('response', (res) => {
    if (res.url().includes('/api/v1/')) answered.push(res.url());
  });
  let releaseScript;
  let releaseApi;
  const scriptGate = new Promise((done) => (releaseScript = done));
  const apiGate = new Promise((done) => (releaseApi = done));
  const hold = (gate) => async (route) => {
    await gate;
    try {
      await route.continue();
    } catch {
      // the page went away meanwhile
    }
  };
  await page.route(/\/dashboard\.js(\?|$)/, hold(scriptGate));
  await page.route(/\/api\/v1\//, hold(apiGate));
  try {
    // The deferred script holds DOMContentLoaded back: wait for the parsed page instead.
    await page.goto(base, { waitUntil: 'commit', timeout: 60000 });
    await page.waitForSelector('#gpuwatch-dashboard', { state: 'attached', timeout: 60000 });
    await page.waitForFunction(() => [...document.styleSheets].some((x) => /dashboard\.css/.test(x.href || '')), null, { timeout: 30000 }).catch(() => {});
    await sleep(500);
    const look = () => page.evaluate(() => {
      const visible = (n) => !!n && n.getClientRects().length > 0 && getComputedStyle(n).visibility !== 'hidden';
      const demoNode = [...document.querySelectorAll('.gw-demo')].find(visible);
      return {
        text: document.body.innerText,
        demo: !!demoNode && /DEMO/.test(demoNode.textContent),
        source: (document.getElementById('gpuwatch-dashboard') || {}).dataset?.source ?? null,
        script: !!window.gpuwatchDashboard,
      };
    });
    let seen = await look();
    r.check(/connecting/i.test(seen.text) && !seen.script && answered.length === 0, 'first paint (page alone, no script, no API answer yet) says "connecting"',
      `${JSON.stringify(seen.text.slice(0, 80))}; data-source ${seen.source}; API answers ${answered.length}`);
    r.check(seen.demo === demo, demo ? 'first paint shows the DEMO banner (the server marked the page data-source="demo")' : 'first paint shows no DEMO banner on a server that is not a demo',
      `data-source ${seen.source}, banner ${seen.demo ? 'shown' : 'not shown'}`);
    releaseScript();
    await page.waitForFunction(() => !!window.gpuwatchDashboard, null, { timeout: 30000 });
    await sleep(300);
    seen = await look();
    r.check(/connecting/i.test(seen.text) && seen.demo === demo && answered.length === 0,
      `with the script running and no API answer yet: "connecting"${demo ? ' and DEMO' : ', no DEMO'} still shown`,
      `${JSON.stringify(seen.text.slice(0, 80))}; banner ${seen.demo ? 'shown' : 'not shown'}; API answers ${answered.length}`);
    releaseApi();
    const ready = await page.waitForFunction(() => window.gpuwatchDashboard.ready, null, { timeout: 60000 }).then(() => true, () => false);
    seen = await look();
    r.check(ready && !/Connecting to the gpuwatch server/.test(seen.text) && seen.demo === demo, 'once the API answers, the page is ready and "connecting" gone',
      `ready ${ready}; banner ${seen.demo ? 'shown' : 'not shown'}`);
  } finally {
    releaseScript();
    releaseApi();
    await page.close();
  }
}

// --- 1. Status badges ---------------------------------------------------------------------

async function readCards(page) {
  return page.evaluate(() => [...document.querySelectorAll('.gw-gpu')].map((c) => {
    const badge = c.querySelector('.gw-health');
    const stat = (label) => [...c.querySelectorAll('.gw-stat')].find((s) => s.querySelector('.gw-stat-label').textContent === label);
    return {
      gpu: Number(c.dataset.gpu),
      status: c.dataset.status,
      badge: badge.textContent,
      title: badge.title,
      holders: [...c.querySelectorAll('.gw-holder')].map((h) => ({
        pid: Number(h.dataset.pid),
        user: h.querySelector('.gw-holder-user').textContent,
        command: h.querySelector('.gw-holder-cmd').textContent,
        commandTitle: h.querySelector('.gw-holder-cmd').title,
        where: h.querySelector('.gw-holder-where').textContent,
        visible: h.getClientRects().length > 0,
      })),
      more: (c.querySelector('.gw-holder-more') || {}).textContent || '',
      mig: [...c.querySelectorAll('.gw-mig-row')].map((m) => ({ text: m.textContent, title: m.title, visible: m.getClientRects().length > 0 })),
      naNote: ((n) => (n && !n.hidden ? n.textContent : ''))(c.querySelector('.gw-na-note')),
      statTitles: Object.fromEntries(['Util', 'Mem util', 'Temp', 'Power'].map((l) => {
        const s = stat(l);
        return [l, s ? { text: s.querySelector('.gw-stat-value').textContent, title: s.querySelector('.gw-stat-value').title } : null];
      })),
    };
  }));
}

const reasonText = (v) => (typeof v === 'string' ? v.replace(/_/g, ' ') : v && v.detail ? String(v.detail) : v && v.reason ? String(v.reason).replace(/_/g, ' ') : '');
const used = (p) => {
  const f = p.fields || {};
  const v = f.used_memory_bytes ?? f.process_used_memory_bytes;
  return typeof v === 'number' ? v : -1;
};

// Each card's badge against the snapshot: never OK with an alert, leak, forecast,
// pre-allocation or thermal throttling on its GPU; at least as bad as its worst alert; LOST and
// STALE for GPUs so; the reasons on hover.
export async function checkStatuses(page, snap, r) {
  const cards = await readCards(page);
  const problems = [];
  const thermal = 0x20 | 0x40;
  for (const d of snap.devices) {
    const card = cards.find((c) => c.gpu === d.index);
    if (!card) {
      problems.push(`GPU ${d.index}: no card`);
      continue;
    }
    const rank = kRank[card.status];
    if (rank == null) problems.push(`GPU ${d.index}: unknown status "${card.status}"`);
    if (!card.title) problems.push(`GPU ${d.index}: the badge has no hover text`);
    const alerts = (snap.alerts || []).filter((a) => a.gpu === d.index);
    for (const a of alerts) {
      if (rank < kRank[a.severity]) problems.push(`GPU ${d.index}: badge ${card.badge} below its ${a.severity} alert ${a.rule}`);
      if (!card.title.includes(String(a.message || a.rule).slice(0, 30))) problems.push(`GPU ${d.index}: the badge's hover text lacks the alert "${a.rule}"`);
    }
    for (const l of (snap.leaks || []).filter((x) => x.gpu === d.index)) {
      if (rank < kRank.warning) problems.push(`GPU ${d.index}: badge ${card.badge} with a ${l.state || 'leak'} on it`);
    }
    for (const x of (snap.preallocated || []).filter((y) => y.gpu === d.index)) {
      if (rank < kRank.warning || !/pre-allocated/.test(card.title)) problems.push(`GPU ${d.index}: badge ${card.badge} ("${card.title.slice(0, 60)}") for pid ${x.pid}'s pre-allocation`);
    }
    const reasons = d.fields && d.fields.clock_event_reasons;
    if (typeof reasons === 'number' && (reasons & thermal) && d.health === 'ok' && rank < kRank.warning) problems.push(`GPU ${d.index}: badge ${card.badge} while its clocks are held down by heat`);
    if (d.health === 'lost' && card.status !== 'lost') problems.push(`GPU ${d.index}: lost but badge ${card.badge}`);
    if (d.health === 'stale' && !/STALE/.test(card.badge)) problems.push(`GPU ${d.index}: stale but badge ${card.badge}`);
    const clean = alerts.length === 0 && d.health === 'ok' && !(snap.leaks || []).some((x) => x.gpu === d.index) && !(snap.preallocated || []).some((x) => x.gpu === d.index);
    if (!clean && card.status === 'ok') problems.push(`GPU ${d.index}: OK although the snapshot has something on it`);
  }
  r.problems('each card\'s badge is the worst of health, alerts, leaks, forecasts, pre-allocations and throttling, reasons on hover', problems);
  const shown = cards.map((c) => `${c.gpu} ${c.badge}`).join(', ');
  r.note(`badges: ${shown}`);
  return cards;
}

// The status rules themselves, on made-up snapshots through the page's own model.js
// (window.gpuwatchDashboard.statusFor).
export async function checkStatusRules(page, r) {
  const hook = await page.evaluate(() => typeof window.gpuwatchDashboard.statusFor === 'function');
  if (!r.check(hook, 'the page offers window.gpuwatchDashboard.statusFor (its status rules)')) return;
  const results = await page.evaluate(() => {
    const now = Date.now() / 1000;
    const base = { memory_used_bytes: 10 * 2 ** 30, memory_total_bytes: 80 * 2 ** 30, utilization_gpu_ratio: 0.9, temperature_gpu_celsius: 60, clock_event_reasons: 0 };
    const device = ({ fields = {}, ...rest } = {}) => ({
      index: 0, name: 'GPU', health: 'ok', unavailable: {}, fields: { ...base, ...fields },
      processes: [{ pid: 7, user: 'u', command: 'python x.py', fields: { used_memory_bytes: 10 * 2 ** 30 } }],
      ...rest,
    });
    const snap = (dev, more = {}) => ({ time: now, devices: [dev], alerts: [], leaks: [], ...more });
    const alert = (severity, rule) => ({ rule, severity, gpu: 0, message: `${rule} says so` });
    const st = (s) => window.gpuwatchDashboard.statusFor(s, 0);
    const standing = (kind, severity) => ({ diagnoses: [{ gpu: 0, kind, severity, message: `GPU 0 ${kind}`, since: now - 60, pid: 7 }] });
    return [
      ['a healthy GPU is OK', st(snap(device())), 'OK'],
      ['a warning alert makes WARNING', st(snap(device(), { alerts: [alert('warning', 'a')] })), 'WARNING'],
      ['critical beats warning', st(snap(device(), { alerts: [alert('warning', 'a'), alert('critical', 'b')] })), 'CRITICAL'],
      ['lost beats a critical alert', st(snap(device({ health: 'lost' }), { alerts: [alert('critical', 'b')] })), 'LOST'],
      ['a stale GPU is STALE over a warning', st(snap(device({ health: 'stale' }), { alerts: [alert('warning', 'a')] })), 'STALE'],
      ['a pre-allocation makes WARNING', st(snap(device(), { preallocated: [{ gpu: 0, pid: 7, bytes: 1, share: 0.8 }] })), 'WARNING'],
      ['an out-of-memory forecast within the hour is CRITICAL', st(snap(device(), { leaks: [{ gpu: 0, state: 'oom_forecast', scope: 'process', pid: 7, rate_bytes_per_second: 1e7, time_to_oom_seconds: 600 }] })), 'CRITICAL'],
      ['a leak hours from out of memory is WARNING', st(snap(device(), { leaks: [{ gpu: 0, state: 'leak', scope: 'device', rate_bytes_per_second: 1e6, time_to_oom_seconds: 36000 }] })), 'WARNING'],
      ['a standing starved diagnosis is WARNING', st(snap(device({ fields: { utilization_gpu_ratio: 0.05 } }), standing('starved', 'warning'))), 'WARNING'],
      ['a diagnosis on another GPU does not count', st(snap(device(), { diagnoses: [{ gpu: 1, kind: 'starved', severity: 'warning', message: 'GPU 1 starved' }] })), 'OK'],
      ['a standing throttling diagnosis at info is INFO', st(snap(device(), standing('throttling', 'info'))), 'INFO'],
      ['clocks held down by heat make WARNING', st(snap(device({ fields: { clock_event_reasons: 0x40 } }))), 'WARNING'],
      ['a power cap is INFO', st(snap(device({ fields: { clock_event_reasons: 0x4 } }))), 'INFO'],
      ['an idle GPU is OK', st(snap(device({ fields: { clock_event_reasons: 0x1, utilization_gpu_ratio: 0 }, processes: [] }))), 'OK'],
    ];
  });
  const problems = results.filter(([, got, want]) => !got || got.label !== want)
    .map(([name, got, want]) => `${name}: got ${got ? `${got.label} (${got.reasons.join('; ')})` : 'nothing'}, want ${want}`);
  r.problems(`the status rules (model.js deviceStatus) on ${results.length} made-up snapshots: worst wins`, problems);
}

// --- 2. Top holders -----------------------------------------------------------------------

export async function checkHolders(page, snap, r) {
  const cards = await readCards(page);
  const problems = [];
  for (const d of snap.devices) {
    const card = cards.find((c) => c.gpu === d.index);
    if (!card || d.health === 'lost') continue;
    const procs = [...(d.processes || [])].sort((a, b) => used(b) - used(a) || a.pid - b.pid);
    const want = procs.slice(0, 3);
    // Processes come and go between the snapshot and the page: compare as sets when sizes match.
    const got = card.holders.map((h) => h.pid);
    if (got.length !== want.length) problems.push(`GPU ${d.index}: ${got.length} holders shown, snapshot has ${procs.length} processes`);
    for (const h of card.holders) {
      const p = procs.find((x) => x.pid === h.pid);
      if (!p) continue;
      if (!h.visible) problems.push(`GPU ${d.index} pid ${h.pid}: holder row not visible`);
      if (h.user !== (p.user || '\u2014')) problems.push(`GPU ${d.index} pid ${h.pid}: user "${h.user}", snapshot "${p.user}"`);
      if (h.commandTitle !== (p.command || '')) problems.push(`GPU ${d.index} pid ${h.pid}: command "${h.commandTitle}", snapshot "${p.command}"`);
      // A Kubernetes pod by its namespace/name, another container by its id.
      const where = p.pod ? `${p.namespace}/${p.pod}` : p.container_id ? p.container_id.slice(0, 12) : '';
      if (where && !h.where.startsWith(where)) problems.push(`GPU ${d.index} pid ${h.pid}: container "${h.where}", snapshot ${where}`);
    }
    const more = procs.length > 3 ? `+${procs.length - 3} more` : '';
    if (Math.abs(procs.length - got.length) <= 3 && card.more !== more && procs.length === d.processes.length && got.length === want.length) {
      const top = new Set(want.map((p) => p.pid));
      if (!got.every((pid) => top.has(pid)) || card.more !== more) problems.push(`GPU ${d.index}: holders ${got.join(',')} "${card.more}", snapshot top ${[...top].join(',')} "${more}"`);
    }
  }
  r.problems('each card names its top 3 memory holders (user, pid, command, container) and "+N more"', problems);
}

// --- 3. MIG instances and N/A reasons -----------------------------------------------------

export async function checkMigAndReasons(page, snap, r, expectMig) {
  const cards = await readCards(page);
  const problems = [];
  const migGpus = snap.devices.filter((d) => Array.isArray(d.mig_devices) && d.mig_devices.length);
  if (expectMig) r.check(migGpus.length > 0, '--expect-mig: the snapshot has a GPU with MIG devices', `${migGpus.length} GPUs`);
  for (const d of migGpus) {
    const card = cards.find((c) => c.gpu === d.index);
    if (!card) continue;
    if (card.mig.length !== d.mig_devices.length || !card.mig.every((m) => m.visible)) problems.push(`GPU ${d.index}: ${card.mig.length} MIG rows shown, snapshot has ${d.mig_devices.length}`);
    d.mig_devices.forEach((m, k) => {
      const profile = (/\bMIG\s+(\S+)/.exec(m.name || (m.fields && m.fields.name) || '') || [])[1];
      if (profile && !(card.mig[k] && card.mig[k].text.includes(profile))) problems.push(`GPU ${d.index} MIG ${k}: row "${card.mig[k] ? card.mig[k].text : ''}" lacks its profile ${profile}`);
    });
    const mode = d.fields && d.fields.mig_mode === 1;
    if (mode && d.fields.utilization_gpu_ratio == null && !/MIG/.test(card.naNote)) problems.push(`GPU ${d.index}: util N/A in MIG mode but the card does not say why ("${card.naNote}")`);
  }
  // Every N/A stat says why, with the snapshot's reason.
  const keys = { Util: ['utilization_gpu_ratio'], 'Mem util': ['memory_utilization_ratio', 'utilization_memory_ratio'], Temp: ['temperature_gpu_celsius'], Power: ['power_draw_watts'] };
  let reasonsSeen = 0;
  for (const d of snap.devices) {
    const card = cards.find((c) => c.gpu === d.index);
    if (!card || d.health === 'lost') continue;
    for (const [label, ks] of Object.entries(keys)) {
      const s = card.statTitles[label];
      if (!s || s.text !== 'N/A') continue;
      const why = ks.map((k) => reasonText((d.unavailable || {})[k])).find(Boolean);
      if (!/^N\/A: ./.test(s.title)) problems.push(`GPU ${d.index} ${label}: N/A without a reason on hover`);
      else if (why && !s.title.includes(why)) problems.push(`GPU ${d.index} ${label}: hover "${s.title}" lacks the snapshot's reason "${why}"`);
      else if (why) reasonsSeen++;
      if (!card.naNote.includes(`${label}`)) problems.push(`GPU ${d.index} ${label}: N/A not explained in the card's note ("${card.naNote}")`);
    }
  }
  r.problems(`MIG instances on their GPU's card; every N/A says why (${reasonsSeen} with the snapshot's reason)`, problems);
}

// --- 4. The process table at 800 px -------------------------------------------------------

export async function checkNarrowTable(page, r, screenshot) {
  const wide = page.viewportSize();
  await page.setViewportSize({ width: 800, height: wide.height });
  await sleep(600);
  const m = await page.evaluate(() => {
    const th = (c) => document.querySelector(`#gw-processes th[data-col="${c}"]`);
    const cell = document.querySelector('#gw-processes tbody tr:not([hidden]) td.gw-col-command');
    if (!cell) return null;
    const style = getComputedStyle(cell);
    const probe = document.createElement('span');
    probe.style.cssText = `font:${style.font};position:absolute;visibility:hidden;white-space:pre`;
    probe.textContent = 'python train.py --model llama-'; // 30 characters
    document.body.appendChild(probe);
    const thirty = probe.getBoundingClientRect().width;
    probe.remove();
    const content = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const container = document.querySelector('#gw-processes tbody tr:not([hidden]) td.gw-col-container');
    return {
      command: th('command').getBoundingClientRect().width,
      container: th('container').getBoundingClientRect().width,
      content,
      thirty,
      chars: Math.floor((content / thirty) * 30),
      containerEllipsis: container ? getComputedStyle(container).textOverflow : '',
      // Every container cell that names one has its full text on hover.
      containerTitle: [...document.querySelectorAll('#gw-processes td.gw-col-container')].every((c) => c.textContent === '\u2014' || !!c.title),
      page: document.documentElement.scrollWidth,
    };
  });
  if (screenshot) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshot, fullPage: true });
    r.note(`screenshot at 800 px: ${screenshot}`);
  }
  await page.setViewportSize(wide);
  await sleep(300);
  if (!r.check(!!m, 'at 800 px the process table has a command cell to measure')) return;
  r.check(m.command > m.container && m.content >= m.thirty && m.containerEllipsis === 'ellipsis' && m.containerTitle,
    'at 800 px the command column is wider than the container column and shows >= 30 characters (container truncated, full text on hover)',
    `command ${m.command.toFixed(0)} px (~${m.chars} characters), container ${m.container.toFixed(0)} px (${m.containerEllipsis}), page ${m.page} px wide`);
}

// --- 6. Charts: spans, thresholds, colours --------------------------------------------------

export async function checkCharts(page, snap, r, dark = false) {
  const charts = (await page.evaluate(() => window.gpuwatchDashboard.charts)).map((c) => ({ thresholds: [], colors: [], ...c }));
  const by = Object.fromEntries(charts.map((c) => [c.id, c]));
  const devices = snap.devices.filter((d) => d.health !== 'lost');
  const t = by.temperature;
  r.check(t && t.yMin <= 30 && t.yMax >= 90 && t.yMax - t.yMin >= 60, 'the temperature chart spans at least 30..90 °C', t ? `y ${t.yMin}..${t.yMax}` : 'no chart');
  r.check(t && t.thresholds.some((x) => x.value === 80), 'the temperature chart has an 80 °C threshold line', t ? JSON.stringify(t.thresholds) : 'no chart');
  const u = by.utilization;
  r.check(u && u.yMin === 0 && u.yMax === 100, 'the utilization chart spans 0..100 %', u ? `y ${u.yMin}..${u.yMax}` : 'no chart');
  const totals = devices.map((d) => d.fields && d.fields.memory_total_bytes).filter((v) => typeof v === 'number').map((v) => v / kGiB);
  const mem = by.memory;
  const wantLines = [...new Set(totals.map((x) => (x * 0.9).toFixed(3)))];
  const gotLines = mem ? mem.thresholds.map((x) => x.value.toFixed(3)) : [];
  r.check(mem && mem.yMin === 0 && (totals.length === 0 || mem.yMax >= Math.max(...totals)) && wantLines.every((x) => gotLines.includes(x)),
    'the memory chart spans 0..the largest total and has a 90 % line for each total', mem ? `y ${mem.yMin}..${Number(mem.yMax).toFixed(1)} GiB; lines ${gotLines.join(', ')}; want ${wantLines.join(', ')}` : 'no chart');
  const limits = devices.map((d) => d.fields && d.fields.power_limit_watts).filter((v) => typeof v === 'number');
  const p = by.power;
  r.check(p && p.yMin === 0 && (limits.length === 0 || p.yMax >= Math.max(...limits)), 'the power chart spans 0..the largest power limit', p ? `y ${p.yMin}..${Number(p.yMax).toFixed(0)} W, limits up to ${Math.max(0, ...limits)} W` : 'no chart');
  const legend = await page.evaluate(() => [...document.querySelectorAll('#gw-chart-temperature .u-legend .u-series')].map((x) => x.textContent.trim()));
  r.check(legend.some((x) => /80\s*°C/.test(x)), 'the temperature threshold line is in the chart\'s legend', legend.join(', '));
  checkColors(r, charts, dark ? 'dark' : 'light', Math.min(8, snap.devices.length));
}

// expected: how many GPU colours each chart must have (its GPUs, 8 at most).
function checkColors(r, charts, scheme, expected) {
  for (const c of charts) {
    const colors = c.colors.slice(0, 8);
    const { delta, pair } = closestColors(colors);
    const ok = colors.length >= expected && (colors.length < 2 || delta >= kMinColorDelta);
    if (!ok || c.id === 'memory') {
      r.check(ok, `${scheme} scheme: the ${colors.length} GPU colours of ${c.id} differ pairwise by CIEDE2000 >= ${kMinColorDelta}`,
        `closest ${pair.join(' / ')}: ${Number.isFinite(delta) ? delta.toFixed(1) : delta}`);
    }
  }
}

// The colours in the other scheme (emulated), then back.
export async function checkColorsDark(page, r, dark, expected) {
  await page.emulateMedia({ colorScheme: dark ? 'light' : 'dark' });
  await sleep(800);
  const charts = (await page.evaluate(() => window.gpuwatchDashboard.charts)).map((c) => ({ colors: [], ...c }));
  const cardColors = await page.evaluate(() => [...document.querySelectorAll('.gw-gpu-index')].slice(0, 8).map((n) => getComputedStyle(n).boxShadow));
  checkColors(r, charts, dark ? 'light' : 'dark', expected);
  const chartColors = charts[0].colors.slice(0, 8).map((c) => String(c).toLowerCase());
  const cardsMatch = cardColors.every((s, i) => {
    const m = /rgba?\([^)]*\)|#[0-9a-f]{6}/i.exec(s);
    const a = m && parseColor(m[0]);
    const b = parseColor(chartColors[i] || '');
    return a && b && a.every((v, k) => Math.abs(v - b[k]) <= 1);
  });
  r.check(cardsMatch && cardColors.length >= expected, `${dark ? 'light' : 'dark'} scheme: each card's GPU colour is its chart line's colour`, `${cardColors.length} cards`);
  await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
  await sleep(500);
}
