// Over time and quota history, from GET /v1/history (usage_history.h: one row per
// tenant, and one for the cluster as tenant "*", every dashboard.historyMs). Charts are
// Chart.js from Debian's libjs-chart.js (the global `Chart`), on a linear time axis
// labelled here, so no date adapter is needed. Long windows are averaged into at most
// MAX_POINTS buckets (gauges averaged, counts summed) so a week draws as fast as an hour.

import * as api from './api.js';
import {esc, clock, date, duration, percent} from './format.js';

const MAX_POINTS = 400;
const WINDOWS = {'1h': 3600e3, '6h': 6 * 3600e3, '24h': 24 * 3600e3, '7d': 7 * 24 * 3600e3};
const GAUGES = ['gpus', 'allocated', 'borrowed', 'utilization', 'share', 'usageGpus', 'pending'];
const COUNTS = ['preemptions', 'restarts', 'placed', 'waitMsSum'];
const COLORS = ['#2f6fdf', '#d9822b', '#2e9f5e', '#c23b3b', '#8a5cc7', '#1f9fa8', '#b8a21c', '#777777'];
let charts = [];

function windowOf(ctx) {
  return ctx.state.historyWindow || '1h';
}

async function fetchHistory(ctx, tenant) {
  const to = Date.now();
  const from = to - WINDOWS[windowOf(ctx)];
  // Whole minutes keep the path, and so its ETag, the same between polls.
  const minute = 60e3;
  const q = `from=${Math.floor(from / minute) * minute}&to=${Math.ceil(to / minute) * minute}`;
  return api.get(`/v1/history?${q}${tenant ? `&tenant=${encodeURIComponent(tenant)}` : ''}`);
}

// Samples of one tenant, bucketed to at most MAX_POINTS points in time order.
function series(samples, tenant, intervalMs, fromMs, toMs) {
  const width = Math.max(intervalMs, Math.ceil((toMs - fromMs) / MAX_POINTS));
  const buckets = new Map();
  for (const s of samples) {
    if (s.tenant !== tenant) continue;
    const k = Math.floor(s.atMs / width) * width;
    let b = buckets.get(k);
    if (!b) {
      b = {atMs: k, n: 0};
      for (const f of [...GAUGES, ...COUNTS]) b[f] = 0;
      buckets.set(k, b);
    }
    ++b.n;
    for (const f of GAUGES) b[f] += s[f];
    for (const f of COUNTS) b[f] += s[f];
  }
  const out = [...buckets.values()].sort((a, b) => a.atMs - b.atMs);
  for (const b of out) for (const f of GAUGES) b[f] /= b.n;
  return {points: out, width};
}

function destroyCharts() {
  for (const c of charts) c.destroy();
  charts = [];
}

// One line chart on `canvas`; `sets` are [{label, data: [{x, y}], axis?, bar?}].
function chart(canvas, sets, {yTitle, y1Title, stacked = false, percentAxis = false} = {}) {
  if (typeof Chart === 'undefined') {
    canvas.replaceWith(Object.assign(document.createElement('p'), {className: 'error', textContent: 'Chart.js did not load (see /ui/chart.js).'}));
    return;
  }
  const scales = {
    x: {type: 'linear', ticks: {maxTicksLimit: 8}},
    y: {beginAtZero: true, stacked, title: {display: !!yTitle, text: yTitle}},
  };
  if (y1Title) {
    scales.y1 = {position: 'right', beginAtZero: true, grid: {drawOnChartArea: false}, title: {display: true, text: y1Title},
      ticks: percentAxis ? {callback: (v) => `${Math.round(v * 100)}%`} : {}};
  }
  // Seconds on the axis once the data spans less than ten minutes.
  const xs = sets.flatMap((s) => s.data.map((p) => p.x));
  const span = xs.length ? Math.max(...xs) - Math.min(...xs) : 0;
  scales.x.ticks.callback = (v) => clock(v, span < 600e3);
  charts.push(new Chart(canvas, {
    type: 'line',
    data: {datasets: sets.map((s, i) => ({
      label: s.label, data: s.data, yAxisID: s.axis || 'y', type: s.bar ? 'bar' : 'line',
      borderColor: COLORS[i % COLORS.length], backgroundColor: COLORS[i % COLORS.length] + (stacked ? '99' : '33'),
      fill: stacked, pointRadius: 0, borderWidth: 2, stepped: s.stepped || false,
    }))},
    options: {
      animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
      interaction: {mode: 'index', intersect: false},
      plugins: {tooltip: {callbacks: {title: (items) => (items.length ? date(items[0].parsed.x) : '')}}},
      scales,
    },
  }));
}

const xy = (points, f) => points.map((p) => ({x: p.atMs, y: f(p)}));
const meanWait = (p) => (p.placed ? p.waitMsSum / p.placed / 60e3 : null);

function toolbar(ctx, tenants, tenant) {
  return `<div class="toolbar">
    <label>Window <select id="window" data-key="window">${Object.keys(WINDOWS).map((w) =>
      `<option ${w === windowOf(ctx) ? 'selected' : ''}>${w}</option>`).join('')}</select></label>
    ${tenants ? `<label>Tenant <select id="tenant" data-key="tenant">${tenants.map((t) =>
      `<option value="${esc(t)}" ${t === tenant ? 'selected' : ''}>${t === '*' ? 'whole cluster' : esc(t)}</option>`).join('')}</select></label>` : ''}
  </div>`;
}

function listen(el, ctx) {
  el.addEventListener('change', (e) => {
    if (e.target.id === 'window') ctx.state.historyWindow = e.target.value;
    else if (e.target.id === 'tenant') ctx.state.historyTenant = e.target.value;
    else return;
    ctx.redraw();
  });
}

const tenantsIn = (samples) => [...new Set(samples.map((s) => s.tenant))].sort();
const empty = (h) => (h.samples.length ? '' : `<p class="note" id="no-history">No usage samples between ${date(h.fromMs)} and ${date(h.toMs)} yet;
  corrald writes one every ${duration(h.intervalMs)}.</p>`);

export const overTime = {
  title: 'Over time',
  async fetch(params, ctx) {
    return fetchHistory(ctx, null);
  },
  draw(el, h, ctx, fresh) {
    destroyCharts();
    const names = tenantsIn(h.samples);
    const admin = ctx.who.role === 'admin';
    const tenant = names.includes(ctx.state.historyTenant) ? ctx.state.historyTenant : admin ? '*' : ctx.who.tenant;
    const {points, width} = series(h.samples, tenant, h.intervalMs, h.fromMs, h.toMs);
    const others = names.filter((t) => t !== '*');
    el.innerHTML = `<h1>Over time</h1>${toolbar(ctx, names.length ? names : null, tenant)}${empty(h)}
      <p class="note">Points of ${duration(width)}; gauges averaged, counts summed.</p>
      <div class="charts">
        <figure><figcaption>Allocated GPUs against the GPUs doing work (allocated × SM utilization)${tenant === '*' ? ', and the fleet' : ''}</figcaption>
          <div class="chart"><canvas id="chart-alloc"></canvas></div></figure>
        ${tenant === '*' && others.length ? `<figure><figcaption>Allocated GPUs by tenant</figcaption>
          <div class="chart"><canvas id="chart-tenants"></canvas></div></figure>` : ''}
        <figure><figcaption>Queue: pending jobs, and the mean wait of the jobs placed (minutes)</figcaption>
          <div class="chart"><canvas id="chart-queue"></canvas></div></figure>
        <figure><figcaption>Preemptions and restarts per point</figcaption>
          <div class="chart"><canvas id="chart-churn"></canvas></div></figure>
      </div>`;
    const alloc = [
      {label: 'allocated', data: xy(points, (p) => p.allocated), stepped: true},
      {label: 'doing work', data: xy(points, (p) => p.allocated * p.utilization)},
    ];
    if (tenant === '*') alloc.push({label: 'fleet GPUs', data: xy(points, (p) => p.gpus), stepped: true});
    else alloc.push({label: 'guaranteed', data: xy(points, (p) => p.gpus), stepped: true});
    chart(el.querySelector('#chart-alloc'), alloc, {yTitle: 'GPUs'});
    const byTenant = el.querySelector('#chart-tenants');
    if (byTenant) {
      chart(byTenant, others.map((t) => ({label: t, stepped: true,
        data: xy(series(h.samples, t, h.intervalMs, h.fromMs, h.toMs).points, (p) => p.allocated)})),
        {yTitle: 'GPUs', stacked: true});
    }
    chart(el.querySelector('#chart-queue'), [
      {label: 'pending jobs', data: xy(points, (p) => p.pending)},
      {label: 'mean wait (min)', data: xy(points, meanWait), axis: 'y1'},
    ], {yTitle: 'jobs', y1Title: 'minutes'});
    chart(el.querySelector('#chart-churn'), [
      {label: 'preemptions', data: xy(points, (p) => p.preemptions), bar: true},
      {label: 'restarts', data: xy(points, (p) => p.restarts), bar: true},
    ], {yTitle: 'count'});
    if (fresh) listen(el, ctx);
  },
};

// One row per tenant over the window: what it was guaranteed, held, borrowed and was
// due, how long its jobs waited and how often they were preempted.
function quotaTable(samples, names) {
  const rows = names.filter((t) => t !== '*').map((t) => {
    const mine = samples.filter((s) => s.tenant === t);
    const n = mine.length || 1;
    const sum = (f) => mine.reduce((a, s) => a + s[f], 0);
    const placed = sum('placed');
    return `<tr data-tenant="${esc(t)}"><th scope="row">${esc(t)}</th>
      <td class="num">${(sum('gpus') / n).toFixed(1)}</td><td class="num">${(sum('allocated') / n).toFixed(1)}</td>
      <td class="num">${(sum('borrowed') / n).toFixed(1)}</td><td class="num">${percent(sum('share') / n, 1)}</td>
      <td class="num">${(sum('usageGpus') / n).toFixed(2)}</td>
      <td class="num">${placed ? duration(sum('waitMsSum') / placed) : '—'}</td>
      <td class="num">${placed}</td><td class="num">${sum('preemptions')}</td>
      <td class="num">${placed ? percent(sum('preemptions') / placed, 1) : '—'}</td></tr>`;
  }).join('');
  return `<table id="quota-table" class="grid"><caption>Means over the window</caption>
    <thead><tr><th>Tenant</th><th>Guaranteed</th><th>Allocated</th><th>Borrowed</th><th>Fair share</th><th>Usage (GPUs)</th>
      <th>Mean wait</th><th>Jobs placed</th><th>Preemptions</th><th>Preemptions per placed job</th></tr></thead>
    <tbody>${rows || '<tr><td colspan="10">No samples yet.</td></tr>'}</tbody></table>`;
}

export const quotas = {
  title: 'Quotas',
  async fetch(params, ctx) {
    return fetchHistory(ctx, null);
  },
  draw(el, h, ctx, fresh) {
    destroyCharts();
    const names = tenantsIn(h.samples).filter((t) => t !== '*');
    const tenant = names.includes(ctx.state.historyTenant) ? ctx.state.historyTenant : names[0];
    el.innerHTML = `<h1>Quota and fair share</h1>${toolbar(ctx, names.length ? names : null, tenant)}${empty(h)}
      ${quotaTable(h.samples, names)}
      ${tenant ? `<div class="charts">
        <figure><figcaption>${esc(tenant)}: guarantee, allocation and borrowing (GPUs), and its fair share</figcaption>
          <div class="chart"><canvas id="chart-quota"></canvas></div></figure>
        <figure><figcaption>${esc(tenant)}: mean wait (minutes) and preemptions per point</figcaption>
          <div class="chart"><canvas id="chart-wait"></canvas></div></figure></div>` : ''}`;
    if (tenant) {
      const {points} = series(h.samples, tenant, h.intervalMs, h.fromMs, h.toMs);
      chart(el.querySelector('#chart-quota'), [
        {label: 'guaranteed', data: xy(points, (p) => p.gpus), stepped: true},
        {label: 'allocated', data: xy(points, (p) => p.allocated), stepped: true},
        {label: 'borrowed', data: xy(points, (p) => p.borrowed), stepped: true},
        {label: 'fair share', data: xy(points, (p) => p.share), axis: 'y1'},
      ], {yTitle: 'GPUs', y1Title: 'share of the fleet', percentAxis: true});
      chart(el.querySelector('#chart-wait'), [
        {label: 'mean wait (min)', data: xy(points, meanWait)},
        {label: 'preemptions', data: xy(points, (p) => p.preemptions), axis: 'y1', bar: true},
      ], {yTitle: 'minutes', y1Title: 'preemptions'});
    }
    if (fresh) listen(el, ctx);
  },
};
