// Jobs: the list (GET /v1/jobs) and one job's detail: its spec as the API shows it
// (secret values are masked by the server), the event timeline, its placement drawn on
// the topology (GET /v1/fleet: leaf, node, NVLink domain), attempts, the last
// checkpoint, restarts and preemptions, the cost so far, the ranks' logs, and for a
// pending job the scheduler's explanation. Cancelling asks for a confirmation.

import * as api from './api.js';
import {esc, date, since, gpuHours, money, gib, reason} from './format.js';

const MAX_JOBS = 5000;
const PHASES = ['', 'pending', 'running', 'succeeded', 'failed', 'cancelled'];

function phaseBadge(phase) {
  return `<span class="phase phase-${esc(phase)}">${esc(phase)}</span>`;
}

export const jobList = {
  title: 'Jobs',
  async fetch(params, ctx) {
    const phase = ctx.state.jobsPhase || '';
    return api.getAll(`/v1/jobs${phase ? `?phase=${phase}` : ''}`, 'jobs', MAX_JOBS);
  },
  draw(el, jobs, ctx, fresh) {
    const phase = ctx.state.jobsPhase || '';
    const now = Date.now();
    const rows = jobs.slice().reverse().map((j) => `<tr data-job="${j.id}">
      <td><a href="#/jobs/${j.id}" data-key="job-${j.id}">${j.id}</a></td>
      <td>${esc(j.name)}</td>
      <td>${esc(j.tenant)}</td>
      <td>${phaseBadge(j.phase)}</td>
      <td>${esc(j.priorityClass)}</td>
      <td class="num">${j.heldGpus || 0} / ${j.gpus}</td>
      <td class="num">${j.attempt}</td>
      <td class="num">${j.preemptions}</td>
      <td>${date(j.createdAtMs)}</td>
      <td>${j.phase === 'pending' ? `waiting ${since(j.queuedAtMs, now)}` : reason(j.reason)}</td>
    </tr>`).join('');
    el.innerHTML = `<h1>Jobs</h1>
      <label>Phase <select id="phase" data-key="phase">
        ${PHASES.map((p) => `<option value="${p}" ${p === phase ? 'selected' : ''}>${p || 'any'}</option>`).join('')}
      </select></label>
      <table id="jobs" class="grid">
        <caption>${jobs.length}${jobs.length >= MAX_JOBS ? '+' : ''} jobs, newest first</caption>
        <thead><tr><th>Job</th><th>Name</th><th>Tenant</th><th>Phase</th><th>Class</th><th>GPUs held</th>
          <th>Attempt</th><th>Preemptions</th><th>Submitted</th><th>State</th></tr></thead>
        <tbody>${rows || '<tr><td colspan="10">No jobs.</td></tr>'}</tbody>
      </table>`;
    if (fresh) {
      el.addEventListener('change', (e) => {
        if (e.target.id !== 'phase') return;
        ctx.state.jobsPhase = e.target.value;
        ctx.redraw();
      });
    }
  },
};

// The job's GPUs drawn where they are: leaf, then node, then the node's NVLink domains;
// the node's other GPUs are drawn dim so the shape of the placement shows.
function placement(alloc, fleet) {
  if (!alloc) return '<p>No GPUs held now.</p>';
  const mine = new Set(alloc.gpus.map((g) => `${g.node}/${g.index}`));
  const byId = new Map(fleet.nodes.map((n) => [n.id, n]));
  const leaves = new Map();
  for (const id of new Set(alloc.gpus.map((g) => g.node))) {
    const node = byId.get(id) || {id, leaf: '?', rack: '', gpus: []};
    const key = node.leaf || '(no leaf)';
    if (!leaves.has(key)) leaves.set(key, []);
    leaves.get(key).push(node);
  }
  const nodeBox = (n) => {
    const domains = new Map();
    for (const g of n.gpus) {
      if (!domains.has(g.nvlink)) domains.set(g.nvlink, []);
      domains.get(g.nvlink).push(g);
    }
    const doms = [...domains].map(([d, gs]) => `<span class="nvlink" title="NVLink domain ${d}">${gs.map((g) =>
      `<span class="gpu ${mine.has(`${n.id}/${g.i}`) ? 'mine' : 'other'}" title="GPU ${g.i}">${g.i}</span>`).join('')}</span>`).join('');
    return `<div class="pnode" data-node="${esc(n.id)}"><div class="pname">${esc(n.id)}
      <small>${esc(n.rack ? `rack ${n.rack}` : '')}${n.nvlinkRack ? ` · NVL ${esc(n.nvlinkRack)}` : ''}</small></div>${doms}</div>`;
  };
  return `<p>${alloc.gpus.length} ${esc(alloc.gpuType)} GPUs on ${[...leaves.values()].flat().length} nodes under
      ${leaves.size} leaf switch${leaves.size === 1 ? '' : 'es'}${alloc.borrowed ? ', borrowed beyond the guarantee' : ''}.</p>
    <div id="placement" class="placement">${[...leaves].map(([leaf, nodes]) =>
      `<div class="pleaf"><div class="pname">leaf ${esc(leaf)}</div>${nodes.map(nodeBox).join('')}</div>`).join('')}</div>`;
}

function timeline(events) {
  return `<ol id="timeline" class="timeline">${events.map((e) => `<li class="ev-${esc(e.kind)}">
    <time>${date(e.timeMs)}</time> <b>${esc(e.kind)}</b> ${reason(e.message)}</li>`).join('')}</ol>`;
}

function attempts(job) {
  if (!job.attempts.length) return '<p>Not placed yet.</p>';
  return `<table id="attempts" class="grid"><thead><tr><th>Attempt</th><th>GPU type</th><th>GPUs</th><th>Nodes</th>
      <th>Placed</th><th>Now</th></tr></thead><tbody>${job.attempts.map((a) => `<tr>
      <td class="num">${a.attempt}</td><td>${esc(a.gpuType)}</td><td class="num">${a.gpus.length}</td>
      <td>${esc([...new Set(a.gpus.map((g) => g.node))].join(', '))}</td>
      <td>${date(a.createdAtMs)}</td><td>${a.active ? 'holds them' : 'released'}</td></tr>`).join('')}</tbody></table>`;
}

function checkpoint(c) {
  if (!c) return '<p>No checkpoint yet.</p>';
  return `<dl class="facts"><dt>Step</dt><dd>${c.step}</dd><dt>Written</dt><dd>${date(c.timeMs)}</dd>
    <dt>Attempt</dt><dd>${c.attempt}</dd><dt>Size</dt><dd>${gib(c.bytes / 1048576)}</dd>
    <dt>Where</dt><dd><code>${esc(c.uri)}</code></dd>${c.throughput ? `<dt>Throughput</dt><dd>${c.throughput.toFixed(1)} steps/s on ${c.gpus} GPUs</dd>` : ''}</dl>`;
}

function cost(c) {
  const buckets = Object.entries(c.buckets);
  return `<p id="cost">${money(c.amountMicros, c.currency)} for ${gpuHours(c.gpuMs)} so far
    <small>(ledger closed to ${date(c.accruedUntilMs)}; the rest estimated from use since)</small></p>
    ${buckets.length ? `<ul>${buckets.map(([b, m]) => `<li>${esc(b)}: ${money(m.amountMicros, c.currency)}, ${gpuHours(m.gpuMs)}</li>`).join('')}</ul>` : ''}`;
}

// One button per rank of the latest attempt: a rank per GPU, or per node for a job
// whose spec says processes: perNode.
function ranks(job) {
  const last = job.attempts[job.attempts.length - 1];
  if (!last) return '<p>No ranks have run.</p>';
  const count = job.spec?.processes === 'perNode' ? new Set(last.gpus.map((g) => g.node)).size : last.gpus.length;
  return `<div class="buttons">${Array.from({length: Math.min(count, 256)}, (_, r) =>
    `<button type="button" data-rank="${r}" data-key="rank-${r}">rank ${r}</button>`).join('')}</div>
    <pre id="log" class="log" tabindex="0" aria-live="polite"></pre>`;
}

export const jobDetail = {
  title: 'Job',
  async fetch([id]) {
    const [job, events, fleet] = await Promise.all([
      api.get(`/v1/jobs/${id}`),
      api.getAll(`/v1/jobs/${id}/events`, 'events', 5000),
      api.get('/v1/fleet'),
    ]);
    // The fleet's readings change every poll; redraw for the job's own changes only.
    return {data: {job: job.data, events: events.data, fleet: fleet.data}, changed: job.changed || events.changed};
  },
  draw(el, {job, events, fleet}, ctx, fresh) {
    const done = ['succeeded', 'failed', 'cancelled'].includes(job.phase);
    const restarts = Math.max(0, job.attempts.length - 1);
    const pending = job.phase === 'pending';
    el.innerHTML = `<h1>Job ${job.id}: ${esc(job.name)} ${phaseBadge(job.phase)}</h1>
      <dl class="facts">
        <dt>Tenant</dt><dd>${esc(job.tenant)}</dd><dt>Class</dt><dd>${esc(job.priorityClass)}</dd>
        <dt>GPUs</dt><dd>${job.heldGpus} held of ${job.gpus} asked</dd>
        <dt>Submitted</dt><dd>${date(job.createdAtMs)}</dd>
        <dt>Attempts</dt><dd>${job.attempts.length} (${restarts} restart${restarts === 1 ? '' : 's'}, ${job.preemptions} preemption${job.preemptions === 1 ? '' : 's'})</dd>
      </dl>
      ${pending ? `<section id="why" class="why"><h2>Why it waits</h2>
        <p title="${esc(job.pendingKind)}">${reason(job.reason || 'waiting for the scheduler')}</p>
        <p>Position ${job.queuePosition || '—'} in the queue, waiting ${since(job.queuedAtMs)}${job.plannedStart ? `;
          ${job.plannedStart.latestAtMs ? `planned to start ${date(job.plannedStart.atMs)}, at the latest ${date(job.plannedStart.latestAtMs)}` : `expected to start ${date(job.plannedStart.atMs)} (a forecast)`}` : ''}.</p></section>`
        : `<p>${reason(job.reason)}</p>`}
      ${!done ? `<p><button type="button" id="cancel" class="danger" data-key="cancel">Cancel job</button></p>` : ''}
      <section><h2>Placement</h2>${placement(job.allocation, fleet)}</section>
      <section><h2>Attempts</h2>${attempts(job)}</section>
      <section><h2>Last checkpoint</h2>${checkpoint(job.lastCheckpoint)}</section>
      <section><h2>Cost</h2>${cost(job.cost)}</section>
      <section><h2>Logs</h2>${ranks(job)}</section>
      <section><h2>Timeline</h2>${timeline(events)}</section>
      <section><h2>Spec</h2><pre id="spec" class="spec">${esc(JSON.stringify(job.spec, null, 2))}</pre></section>`;
    if (!fresh) return;
    el.addEventListener('click', async (e) => {
      const rank = e.target.closest('[data-rank]');
      if (rank) {
        const log = el.querySelector('#log');
        log.textContent = `Fetching rank ${rank.dataset.rank}'s log…`;
        try {
          const {data} = await api.get(`/v1/jobs/${job.id}/logs?rank=${rank.dataset.rank}&tailBytes=65536`);
          log.textContent = data || '(empty)';
        } catch (err) {
          log.textContent = err.message;
        }
        return;
      }
      if (e.target.id === 'cancel') {
        const why = await ctx.confirm(`Cancel job ${job.id}?`,
          `${job.name} of ${job.tenant} stops now and releases its GPUs. This cannot be undone.`);
        if (why === null) return;
        try {
          await api.post(`/v1/jobs/${job.id}/cancel`, why ? {reason: why} : {});
          ctx.notify('');
        } catch (err) {
          ctx.notify(`cancel refused: ${err.message}`);
        }
        ctx.redraw();
      }
    });
  },
};
