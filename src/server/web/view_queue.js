// Queue by tenant: each tenant's guarantee, borrow limit, fair share and use per GPU
// type (GET /v1/shares), and the pending jobs in queue order with their reason and
// planned start (GET /v1/queue).

import * as api from './api.js';
import {esc, date, since, percent, reason} from './format.js';

const MAX_PENDING = 2000;

function tenantRows(shares) {
  const fleetGpus = shares.fleet.reduce((n, t) => n + t.gpus, 0);
  return shares.tenants.map((t) => {
    const types = t.gpus.length ? t.gpus : [{type: '—', guaranteed: 0, borrowLimit: null, allocated: 0, borrowed: 0, lent: 0}];
    return types.map((g, i) => {
      const fairGpus = t.share === null ? null : t.share * fleetGpus;
      const first = i === 0;
      return `<tr data-tenant="${esc(t.tenant)}">
        ${first ? `<th scope="row" rowspan="${types.length}">${esc(t.tenant)}${t.parent ? `<small> in ${esc(t.parent)}</small>` : ''}</th>
        <td rowspan="${types.length}" class="num">${esc(t.weight)}</td>
        <td rowspan="${types.length}" class="num" title="${fairGpus === null ? '' : `${fairGpus.toFixed(1)} of ${fleetGpus} GPUs`}">${t.active ? percent(t.share, 1) : 'idle'}</td>
        <td rowspan="${types.length}" class="num">${t.usageGpus === null ? '—' : t.usageGpus.toFixed(2)}</td>
        <td rowspan="${types.length}" class="num">${t.pendingJobs}</td>` : ''}
        <td>${esc(g.type)}</td>
        <td class="num">${g.guaranteed}</td>
        <td class="num">${g.borrowLimit === null ? 'unlimited' : g.borrowLimit}</td>
        <td class="num" data-field="allocated">${g.allocated}</td>
        <td class="num">${g.borrowed}</td>
        <td class="num">${g.lent}</td>
        <td>${bar(g.allocated, g.guaranteed)}</td>
      </tr>`;
    }).join('');
  }).join('');
}

// Use against guarantee: the part within it, and what is borrowed beyond.
function bar(allocated, guaranteed) {
  const top = Math.max(allocated, guaranteed, 1);
  const within = Math.min(allocated, guaranteed) / top * 100;
  const beyond = Math.max(0, allocated - guaranteed) / top * 100;
  const line = guaranteed / top * 100;
  return `<span class="bar" role="img" aria-label="${allocated} used of ${guaranteed} guaranteed">
    <span class="within" style="width:${within}%"></span><span class="beyond" style="width:${beyond}%"></span>
    <span class="line" style="left:${line}%"></span></span>`;
}

function pendingRows(items, now) {
  return items.map((q) => `<tr data-job="${q.job}">
    <td class="num">${q.position || '—'}</td>
    <td><a href="#/jobs/${q.job}" data-key="job-${q.job}">${q.job}</a></td>
    <td>${esc(q.name)}</td>
    <td>${esc(q.tenant)}</td>
    <td>${esc(q.priorityClass)}</td>
    <td class="num">${q.gpus}</td>
    <td>${since(q.queuedAtMs, now)}</td>
    <td>${q.plannedStart ? `${date(q.plannedStart.atMs)}` : '—'}</td>
    <td title="${esc(q.kind)}">${reason(q.reason)}</td>
  </tr>`).join('');
}

export default {
  title: 'Queue',
  async fetch() {
    const [shares, pending] = await Promise.all([
      api.get('/v1/shares'),
      api.getAll('/v1/queue', 'queue', MAX_PENDING),
    ]);
    return {data: {shares: shares.data, pending: pending.data}, changed: shares.changed || pending.changed};
  },
  draw(el, {shares, pending}) {
    const now = Date.now();
    el.innerHTML = `<h1>Queue by tenant</h1>
      ${shares.sharesAtCycle ? '' : '<p class="note">Fair shares appear after the scheduler\'s first cycle.</p>'}
      <p class="note">Fleet: ${shares.fleet.map((t) => `${t.allocated} of ${t.gpus} ${esc(t.type)} allocated`).join(', ') || 'no GPUs registered'}.
        Fair share splits the fleet by weight among tenants with work; usage is decayed use in average GPUs.</p>
      <table id="tenants" class="grid">
        <caption>Tenants</caption>
        <thead><tr><th>Tenant</th><th>Weight</th><th>Fair share</th><th>Usage (GPUs)</th><th>Pending</th>
          <th>GPU type</th><th>Guaranteed</th><th>Borrow limit</th><th>Allocated</th><th>Borrowed</th><th>Lent</th><th>Use</th></tr></thead>
        <tbody>${tenantRows(shares)}</tbody>
      </table>
      <table id="pending" class="grid">
        <caption>Pending jobs (${pending.length}${pending.length >= MAX_PENDING ? '+' : ''}), in the order the scheduler considers them</caption>
        <thead><tr><th>Position</th><th>Job</th><th>Name</th><th>Tenant</th><th>Class</th><th>GPUs</th><th>Waiting</th><th>Planned start</th><th>Why it waits</th></tr></thead>
        <tbody>${pendingRows(pending, now) || '<tr><td colspan="9">Nothing is waiting.</td></tr>'}</tbody>
      </table>`;
  },
};
