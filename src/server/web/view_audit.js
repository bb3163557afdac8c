// Audit (admins): the hash-chained audit log (GET /v1/audit), newest first, and its
// verification (GET /v1/audit/verify replays the chain from the first entry).

import * as api from './api.js';
import {esc, date} from './format.js';

const MAX_ENTRIES = 20000;
const SHOWN = 500;

export default {
  title: 'Audit',
  async fetch() {
    const [entries, verdict] = await Promise.all([
      api.getAll('/v1/audit', 'entries', MAX_ENTRIES),
      api.get('/v1/audit/verify'),
    ]);
    return {data: {entries: entries.data, verdict: verdict.data}, changed: entries.changed || verdict.changed};
  },
  draw(el, {entries, verdict}, ctx, fresh) {
    const filter = (ctx.state.auditFilter || '').toLowerCase();
    const shown = entries.slice().reverse()
      .filter((e) => !filter || `${e.actor} ${e.action} ${e.target}`.toLowerCase().includes(filter))
      .slice(0, SHOWN);
    el.innerHTML = `<h1>Audit log</h1>
      <p id="verdict" class="${verdict.ok ? 'ok' : 'error'}" role="status">${verdict.ok
        ? `The chain of ${verdict.entries} entries verifies: no entry was changed or removed.`
        : `The chain does not verify at entry ${verdict.firstBadSeq}: ${esc(verdict.problem)}`}</p>
      <label>Filter <input id="audit-filter" type="search" value="${esc(ctx.state.auditFilter || '')}" data-key="audit-filter"
        placeholder="actor, action or target"></label>
      <table id="audit" class="grid">
        <caption>${shown.length} of ${entries.length}${entries.length >= MAX_ENTRIES ? '+' : ''} entries, newest first</caption>
        <thead><tr><th>Seq</th><th>Time</th><th>Actor</th><th>Action</th><th>Target</th><th>Before</th><th>After</th></tr></thead>
        <tbody>${shown.map((e) => `<tr data-seq="${e.seq}">
          <td class="num">${e.seq}</td><td>${date(e.timeMs)}</td><td>${esc(e.actor)}</td><td>${esc(e.action)}</td>
          <td>${esc(e.target)}</td><td class="clip">${esc(e.before)}</td><td class="clip">${esc(e.after)}</td></tr>`).join('')}</tbody>
      </table>`;
    if (!fresh) return;
    el.addEventListener('input', (e) => {
      if (e.target.id !== 'audit-filter') return;
      ctx.state.auditFilter = e.target.value;
      ctx.redraw();
    });
  },
};
