// What a person reads: dates, durations, GPU-hours and money in human units, and the
// escaping every view uses before it puts text into HTML.

export function esc(v) {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({
    '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
  })[c]);
}

const pad = (n) => String(n).padStart(2, '0');

// "2026-12-02 19:30:05" in the browser's time zone; "—" for none.
export function date(ms) {
  if (!ms) return '—';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// "19:30" for chart axes; "19:30:05" with seconds.
export function clock(ms, seconds = false) {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ''}`;
}

// "3d 4h", "2h 5m", "4m 12s", "9s".
export function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  let s = Math.max(0, Math.round(ms / 1000));
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s}s`;
  return `${s}s`;
}

// A duration from `ms` until now (`ago`) or from now until `ms`.
export function since(ms, now = Date.now()) {
  return ms ? duration(now - ms) : '—';
}

// A reason or event message the server wrote with "<ms> (ms since epoch)" in it (an
// instant: a planned start, a reclaim, a reservation's opening), escaped, with each such
// instant as a date and how far off it is, the way the CLI shows it (reason_text).
export function reason(text, now = Date.now()) {
  return esc(text).replace(/(\d{1,15}) \(ms since epoch\)/g, (_, ms) => {
    const t = Number(ms);
    return `${date(t)} (${t >= now ? `in ${duration(t - now)}` : `${duration(now - t)} ago`})`;
  });
}

export function gpuHours(gpuMs) {
  const h = (gpuMs || 0) / 3600000;
  return `${h < 10 ? h.toFixed(2) : h.toFixed(1)} GPU-h`;
}

// Money from micro-units of `currency`.
export function money(micros, currency) {
  const v = (micros || 0) / 1e6;
  try {
    return new Intl.NumberFormat(undefined, {style: 'currency', currency}).format(v);
  } catch {
    return `${v.toFixed(2)} ${currency || ''}`.trim();
  }
}

export function percent(fraction, digits = 0) {
  return fraction === null || fraction === undefined ? '—' : `${(fraction * 100).toFixed(digits)}%`;
}

export function gib(mib) {
  return mib === null || mib === undefined ? '—' : `${(mib / 1024).toFixed(1)} GiB`;
}
