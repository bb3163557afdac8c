// Cost: the ledger (GET /v1/chargeback, docs/ledger.md) for a chosen period, grouped
// by tenant, job, GPU type, day or bucket, with each bucket's share and a CSV export of
// it (corrald's, as `corral cost -o csv`). The ledger covers closed periods only (accruedUntil).

import * as api from './api.js';
import {esc, date, gpuHours, money} from './format.js';

const GROUPS = {tenant: 'Tenant', job: 'Job', gpuType: 'GPU type', day: 'Day', bucket: 'Bucket'};
const DAY = 86400e3;

const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);

function period(ctx) {
  const st = ctx.state;
  if (!st.costTo) st.costTo = isoDay(Date.now() + DAY);
  if (!st.costFrom) st.costFrom = isoDay(Date.now() - 30 * DAY);
  if (!st.costGroup) st.costGroup = 'tenant';
  return st;
}

function bucketsOf(rows) {
  const names = new Set();
  for (const r of rows) for (const b of Object.keys(r.buckets)) names.add(b);
  return [...names].sort();
}

export default {
  title: 'Cost',
  fetch(params, ctx) {
    const st = period(ctx);
    return api.get(`/v1/chargeback?from=${st.costFrom}&to=${st.costTo}&groupBy=${st.costGroup}`);
  },
  draw(el, report, ctx, fresh) {
    const st = period(ctx);
    const buckets = bucketsOf(report.rows);
    const cur = report.currency;
    const tenantCols = report.groupBy === 'tenant';
    const max = Math.max(1, ...report.rows.map((r) => r.charged.amountMicros + (r.attributed?.amountMicros || 0)));
    const rows = report.rows.map((r) => `<tr>
      <th scope="row">${report.groupBy === 'job' ? `<a href="#/jobs/${esc(r.job)}">job ${esc(r.job)}</a>` : esc(r[report.groupBy])}</th>
      <td class="num">${gpuHours(r.charged.gpuMs)}</td><td class="num">${money(r.charged.amountMicros, cur)}</td>
      ${buckets.map((b) => `<td class="num">${r.buckets[b] ? money(r.buckets[b].amountMicros, cur) : '—'}</td>`).join('')}
      ${tenantCols ? `<td class="num">${money(r.attributed.amountMicros, cur)}</td><td class="num">${money(r.totalAmountMicros, cur)}</td>` : ''}
      <td><span class="bar"><span class="within" style="width:${r.charged.amountMicros / max * 100}%"></span>${tenantCols
        ? `<span class="beyond" style="width:${r.attributed.amountMicros / max * 100}%"></span>` : ''}</span></td></tr>`).join('');
    el.innerHTML = `<h1>Cost</h1>
      <form id="cost-form" class="toolbar">
        <label>From <input type="date" id="from" value="${esc(st.costFrom)}" data-key="from" required></label>
        <label>To <input type="date" id="to" value="${esc(st.costTo)}" data-key="to" required></label>
        <label>Group by <select id="group" data-key="group">${Object.entries(GROUPS).map(([k, v]) =>
          `<option value="${k}" ${k === st.costGroup ? 'selected' : ''}>${v}</option>`).join('')}</select></label>
        <button type="submit">Show</button>
        <button type="button" id="export" data-key="export">Export CSV</button>
      </form>
      <p class="note">The ledger from ${date(report.fromMs)} to ${date(report.toMs)}, closed up to ${date(report.accruedUntilMs)}
        (periods of ${Math.round(report.periodMs / 60e3)} min); attribution of idle guarantees: ${esc(report.attribution)}.
        ${report.unpricedGpuTypes.length ? `<br><b>No price for</b> ${esc(report.unpricedGpuTypes.join(', '))}: charged at 0.` : ''}</p>
      <table id="chargeback" class="grid">
        <thead><tr><th>${GROUPS[report.groupBy]}</th><th>GPU-hours</th><th>Charged</th>${buckets.map((b) => `<th>${esc(b)}</th>`).join('')}
          ${tenantCols ? '<th>Attributed</th><th>Total</th>' : ''}<th>Share</th></tr></thead>
        <tbody>${rows || `<tr><td colspan="${4 + buckets.length + (tenantCols ? 2 : 0)}">Nothing in the ledger for this period.</td></tr>`}</tbody>
        ${report.total ? `<tfoot><tr><th scope="row">All</th><td class="num">${gpuHours(report.total.gpuMs)}</td>
          <td class="num">${money(report.total.amountMicros, cur)}</td><td colspan="${buckets.length + (tenantCols ? 3 : 1)}">
          ${report.unattributed.amountMicros ? `of which ${money(report.unattributed.amountMicros, cur)} unattributed idle capacity` : ''}</td></tr></tfoot>` : ''}
      </table>`;
    ctx.state.costReport = {report, buckets};
    if (!fresh) return;
    el.addEventListener('submit', (e) => {
      e.preventDefault();
      st.costFrom = el.querySelector('#from').value;
      st.costTo = el.querySelector('#to').value;
      st.costGroup = el.querySelector('#group').value;
      ctx.redraw();
    });
    // The export is corrald's CSV of the report (GET /v1/chargeback?format=csv), the same
    // bytes as `corral cost -o csv`: one schema, rows that add up to its TOTAL row.
    el.addEventListener('click', async (e) => {
      if (e.target.id !== 'export') return;
      const {report: r} = ctx.state.costReport;
      const {data} = await api.get(`/v1/chargeback?from=${r.fromMs}&to=${r.toMs}&groupBy=${r.groupBy}&format=csv`);
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([data], {type: 'text/csv'}));
      a.download = `corral-cost-${r.groupBy}-${isoDay(r.fromMs)}-${isoDay(r.toMs)}.csv`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    });
  },
};
