// Fleet: every node and GPU as a heatmap (GET /v1/fleet), grouped by leaf switch and
// rack, coloured by the chosen metric, with each node's cordon/drain state and agent, and
// each rack's power cap and the watts in use against it (as GET /v1/racks counts them).
// Clicking a GPU (or Enter on a node) shows its GPUs and their jobs; an admin can
// cordon, drain and undrain it from there. The map is one string put into the page at
// once (10,000 GPUs draw in a few hundred milliseconds; docs/performance.md), and the
// nodes take one tab stop: arrow keys move between them (a roving tabindex).

import * as api from './api.js';
import {esc, date, duration, gib, percent, watts} from './format.js';

const METRICS = {
  health: {label: 'Health', legend: ['ok', 'degraded', 'unhealthy', 'no report']},
  util: {label: 'Utilization (SM %)', legend: ['0%', '50%', '100%']},
  power: {label: 'Power (W)', legend: ['idle', 'busiest GPU']},
  temp: {label: 'Temperature (°C)', legend: ['30 °C', '60 °C', '90 °C']},
  throttle: {label: 'Throttling', legend: ['not throttled', 'throttled', 'no report']},
  held: {label: 'Allocation', legend: ['idle', 'held', 'unhealthy', 'shares']},
};

const level = (v, lo, hi) => Math.max(0, Math.min(9, Math.floor((v - lo) / (hi - lo) * 10)));

// The CSS class that colours one GPU cell under `metric`.
function cellClass(g, metric, maxPower) {
  switch (metric) {
    case 'health': return g.util === null && g.health === 'ok' ? 'none' : `h-${g.health}`;
    case 'util': return g.util === null ? 'none' : `l${level(g.util, 0, 100)}`;
    case 'power': return g.power === null ? 'none' : `l${level(g.power, 0, maxPower)}`;
    case 'temp': return g.temp === null ? 'none' : `l${level(g.temp, 30, 90)}`;
    case 'throttle': return g.util === null ? 'none' : g.throttle.length ? 'h-unhealthy' : 'h-ok';
    default: return g.health === 'unhealthy' ? 'h-unhealthy' : g.shares.length ? 'shared' : g.held ? 'held' : 'idle';
  }
}

function gpuTitle(n, g) {
  const parts = [`${n.id} GPU ${g.i} (${g.type}, NVLink ${g.nvlink})`, g.health + (g.problem ? `: ${g.problem}` : '')];
  if (g.util !== null) parts.push(`${g.util}% SM, ${g.power} W, ${g.temp} °C, ${gib(g.memMib)} used`);
  if (g.throttle.length) parts.push(`throttled: ${g.throttle.join(', ')}`);
  if (g.shares.length) return `${esc(parts.join('\n'))}\nshares: ${shareText(g)}`;
  parts.push(g.job ? `job ${g.job} of ${g.tenant}` : g.held ? 'held by another tenant' : 'idle');
  return esc(parts.join('\n'));
}

// A GPU of shares, for people: "job 12 (vision) 0.25, another tenant's 0.5; 0.25 free".
// `job` writes a visible share's job (plain text for a title, a link for the table);
// the result is HTML-escaped but for what `job` returns.
function shareText(g, job = (id) => `job ${id}`) {
  const each = g.shares.map((s) => `${s.job ? `${job(s.job)} (${esc(s.tenant)})` : 'another tenant&#39;s'} ${s.milli / 1000}`);
  const free = 1000 - g.heldMilli;
  return each.join(', ') + (free > 0 ? `; ${free / 1000} free` : '');
}

// leaf -> rack -> nodes, in name order.
function groups(nodes) {
  const leaves = new Map();
  for (const n of nodes) {
    const leaf = n.leaf || '(no leaf)';
    if (!leaves.has(leaf)) leaves.set(leaf, new Map());
    const racks = leaves.get(leaf);
    const rack = n.rack || '(no rack)';
    if (!racks.has(rack)) racks.set(rack, []);
    racks.get(rack).push(n);
  }
  return leaves;
}

function summary(nodes) {
  let gpus = 0, held = 0, shared = 0, unhealthy = 0, utilSum = 0, reporting = 0;
  const admin = {active: 0, cordoned: 0, draining: 0};
  for (const n of nodes) {
    admin[n.admin] = (admin[n.admin] || 0) + 1;
    for (const g of n.gpus) {
      ++gpus;
      if (g.held) ++held;
      if (g.shares.length) ++shared;
      if (g.health === 'unhealthy') ++unhealthy;
      if (g.util !== null) { utilSum += g.util; ++reporting; }
    }
  }
  return `<p id="fleet-summary" class="note">${nodes.length} nodes, ${gpus} GPUs: ${held} held (${percent(gpus ? held / gpus : 0)}${shared ? `, ${shared} of them shared` : ''}),
    ${unhealthy} unhealthy; mean SM utilization ${reporting ? `${(utilSum / reporting).toFixed(0)}%` : '—'}
    over ${reporting} reporting GPUs. ${admin.cordoned} cordoned, ${admin.draining} draining.</p>`;
}

// "1.2 of 1.5 kW" for a capped rack, "1.2 kW, no cap" for one without.
function rackPower(r) {
  return r.capWatts === null ? `${watts(r.usedWatts)}, no cap` : `${watts(r.usedWatts)} of ${watts(r.capWatts)}`;
}

// One row per rack: its cap, the watts in use, what is free, its nodes and GPUs; folded
// away unless its user opened it (it stays as they left it across redraws).
function racksTable(racks, open) {
  if (!racks?.length) return '';
  const rows = racks.map((r) => `<tr data-rack="${esc(r.name)}" class="${r.capWatts !== null && r.freeWatts === 0 ? 'full' : ''}">
      <td>${esc(r.name)}</td><td class="num">${r.capWatts === null ? 'none' : watts(r.capWatts)}</td>
      <td class="num">${watts(r.usedWatts)}</td><td class="num">${r.freeWatts === null ? '—' : watts(r.freeWatts)}</td>
      <td class="num">${r.nodes}</td><td class="num">${r.gpus}</td><td class="num">${r.gpusHeld}</td></tr>`).join('');
  return `<details id="racks" class="racks" data-key="racks"${open ? ' open' : ''}><summary>Rack power: ${racks.filter((r) => r.capWatts !== null).length} of ${racks.length} racks capped</summary>
    <table class="grid" id="rack-power"><thead><tr><th>Rack</th><th>Cap</th><th>In use</th><th>Free</th>
      <th>Nodes</th><th>GPUs</th><th>Held</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}

function detail(n, ctx, gpu) {
  if (!n) return '<p class="note">Select a GPU or a node (Enter) to see its jobs.</p>';
  const admin = ctx.who.role === 'admin' ? `<div class="buttons">
      ${n.admin !== 'cordoned' && n.admin !== 'draining' ? `<button type="button" data-action="cordon" data-key="act-cordon">Cordon</button>` : ''}
      ${n.admin !== 'draining' ? `<button type="button" data-action="drain" class="danger" data-key="act-drain">Drain</button>` : ''}
      ${n.admin !== 'active' ? `<button type="button" data-action="undrain" data-key="act-undrain">Undrain</button>` : ''}
    </div>` : '';
  const rows = n.gpus.map((g) => `<tr class="${g.i === gpu ? 'selected' : ''}" data-gpu-row="${g.i}">
      <td class="num">${g.i}</td><td>${esc(g.type)}</td><td class="num">${g.nvlink}</td>
      <td>${esc(g.health)}${g.problem ? `: ${esc(g.problem)}` : ''}</td>
      <td class="num">${g.util === null ? '—' : `${g.util}%`}</td><td class="num">${g.power === null ? '—' : `${g.power} W`}</td>
      <td class="num">${g.temp === null ? '—' : `${g.temp} °C`}</td><td>${esc(g.throttle.join(', ') || '—')}</td>
      <td>${g.shares.length ? shareText(g, (id) => `<a href="#/jobs/${id}">job ${id}</a>`) : g.job ? `<a href="#/jobs/${g.job}">job ${g.job}</a> (${esc(g.tenant)})` : g.held ? 'another tenant' : 'idle'}</td></tr>`).join('');
  return `<h2>Node ${esc(n.id)} <span class="admin admin-${esc(n.admin)}">${esc(n.admin)}</span></h2>
    <p>${esc([n.region, n.spine && `spine ${n.spine}`, n.leaf && `leaf ${n.leaf}`, n.rack && `rack ${n.rack}`,
      n.nvlinkRack && `NVLink rack ${n.nvlinkRack}`].filter(Boolean).join(' · '))}.
      Agent ${esc(n.agent)}${n.heartbeatAgeMs === null ? '' : `, last heartbeat ${duration(n.heartbeatAgeMs)} ago`}.
      ${n.adminReason ? `<br>${esc(n.adminReason)}` : ''}</p>
    ${admin}
    <table class="grid" id="node-gpus"><thead><tr><th>GPU</th><th>Type</th><th>NVLink</th><th>Health</th><th>SM</th>
      <th>Power</th><th>Temp</th><th>Throttle</th><th>Job</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function heatmap(nodes, metric, focus, racks) {
  const rackOf = new Map((racks || []).map((r) => [r.name, r]));
  let maxPower = 1;
  for (const n of nodes) for (const g of n.gpus) if (g.power > maxPower) maxPower = g.power;
  const focusId = nodes.some((n) => n.id === focus) ? focus : nodes[0]?.id;
  const out = [];
  for (const [leaf, racks] of groups(nodes)) {
    out.push(`<section class="leaf"><h3>leaf ${esc(leaf)}</h3>`);
    for (const [rack, members] of racks) {
      const power = rackOf.get(rack);
      out.push(`<div class="rack"><h4>rack ${esc(rack)}${power ? ` <span class="rack-power">${esc(rackPower(power))}</span>` : ''}</h4><div class="nodes">`);
      for (const n of members) {
        const id = esc(n.id);
        out.push(`<div class="node admin-${n.admin} agent-${n.agent}" data-node="${id}" data-key="node-${id}" tabindex="${n.id === focusId ? 0 : -1}" title="${id}, ${n.admin}" aria-label="node ${id}, ${n.admin}">`);
        out.push(`<span class="nname">${id}</span>`);
        for (const g of n.gpus) out.push(`<span class="g ${cellClass(g, metric, maxPower)}" data-gpu="${g.i}" title="${gpuTitle(n, g)}"></span>`);
        out.push('</div>');
      }
      out.push('</div></div>');
    }
    out.push('</section>');
  }
  return out.join('');
}

// The node the arrow `key` moves to from `node`: left/right along the row, up/down by
// one row of the wrapped layout.
function moveFrom(node, key) {
  const all = [...document.querySelectorAll('#heatmap .node')];
  const i = all.indexOf(node);
  if (key === 'Home') return all[0];
  if (key === 'End') return all[all.length - 1];
  if (key === 'ArrowRight') return all[i + 1];
  if (key === 'ArrowLeft') return all[i - 1];
  const siblings = [...node.parentElement.children];
  const perRow = siblings.filter((s) => s.offsetTop === siblings[0].offsetTop).length || 1;
  return all[i + (key === 'ArrowDown' ? perRow : -perRow)];
}

export default {
  title: 'Fleet',
  fetch() {
    return api.get('/v1/fleet');
  },
  draw(el, fleet, ctx, fresh) {
    const t0 = performance.now();
    const st = ctx.state;
    st.fleetMetric = st.fleetMetric || 'health';
    const selected = fleet.nodes.find((n) => n.id === st.fleetNode);
    const m = METRICS[st.fleetMetric];
    el.innerHTML = `<h1>Fleet</h1>${summary(fleet.nodes)}${racksTable(fleet.racks, st.fleetRacksOpen)}
      <div class="toolbar"><label>Colour by <select id="metric" data-key="metric">
        ${Object.entries(METRICS).map(([k, v]) => `<option value="${k}" ${k === st.fleetMetric ? 'selected' : ''}>${v.label}</option>`).join('')}
      </select></label>
      <span class="legend legend-${st.fleetMetric}">${m.legend.map((l, i) => `<span class="key k${i}">${esc(l)}</span>`).join('')}</span>
      <span class="note">Readings of ${date(fleet.atMs)}.</span></div>
      <div class="fleet-layout">
        <div id="heatmap" class="heatmap metric-${st.fleetMetric}${fleet.nodes.length <= 64 ? ' roomy' : ''}" role="group" aria-label="Nodes; arrow keys move, Enter shows a node">${heatmap(fleet.nodes, st.fleetMetric, st.fleetFocus, fleet.racks)}</div>
        <aside id="detail" class="detail" aria-live="polite">${detail(selected, ctx, st.fleetGpu)}</aside>
      </div>`;
    document.body.dataset.fleetRenderMs = (performance.now() - t0).toFixed(1);
    if (!fresh) return;

    const select = (nodeId, gpu) => {
      st.fleetNode = nodeId;
      st.fleetFocus = nodeId;
      st.fleetGpu = gpu;
      ctx.redraw();
    };
    // 'toggle' does not bubble: caught on the way down.
    el.addEventListener('toggle', (e) => {
      if (e.target.id === 'racks') st.fleetRacksOpen = e.target.open;
    }, true);
    el.addEventListener('change', (e) => {
      if (e.target.id !== 'metric') return;
      st.fleetMetric = e.target.value;
      ctx.redraw();
    });
    el.addEventListener('click', async (e) => {
      const action = e.target.closest('[data-action]');
      if (action) {
        const verb = action.dataset.action;
        const node = st.fleetNode;
        const what = {
          cordon: 'No new work is placed on it; running jobs stay.',
          drain: 'No new work is placed on it, and its running jobs checkpoint and move elsewhere.',
          undrain: 'It takes new work again.',
        }[verb];
        const reason = await ctx.confirm(`${verb[0].toUpperCase()}${verb.slice(1)} node ${node}?`, what);
        if (reason === null) return;
        try {
          await api.post(`/v1/nodes/${encodeURIComponent(node)}/${verb}`, reason ? {reason} : {});
          ctx.notify('');
        } catch (err) {
          ctx.notify(`${verb} of ${node} refused: ${err.message}`);
        }
        ctx.redraw();
        return;
      }
      const cell = e.target.closest('.g');
      const node = e.target.closest('.node');
      if (node) select(node.dataset.node, cell ? Number(cell.dataset.gpu) : null);
    });
    el.addEventListener('keydown', (e) => {
      const node = e.target.closest?.('.node');
      if (!node) return;
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        select(node.dataset.node, null);
        return;
      }
      if (!['ArrowRight', 'ArrowLeft', 'ArrowUp', 'ArrowDown', 'Home', 'End'].includes(e.key)) return;
      e.preventDefault();
      const next = moveFrom(node, e.key);
      if (!next) return;
      node.tabIndex = -1;
      next.tabIndex = 0;
      next.focus();
      st.fleetFocus = next.dataset.node;
    });
  },
};
