// Calls to corrald's API with the signed-in token. GETs are conditional: each answer's
// ETag is kept, the next poll sends If-None-Match, and a 304 returns the kept answer
// with `changed: false`, so a view re-renders only when its data changed.

const TOKEN_KEY = 'corral.token';
const cache = new Map(); // path -> {etag, data}

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(t) {
  cache.clear();
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

async function call(method, path, body, extraHeaders = {}) {
  const headers = {Authorization: `Bearer ${token()}`, ...extraHeaders};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  return res;
}

async function parse(res) {
  const type = res.headers.get('Content-Type') || '';
  return type.startsWith('application/json') ? res.json() : res.text();
}

// {data, changed}. Throws ApiError on an error answer.
export async function get(path) {
  const kept = cache.get(path);
  const res = await call('GET', path, undefined, kept ? {'If-None-Match': kept.etag} : {});
  if (res.status === 304 && kept) return {data: kept.data, changed: false};
  const data = await parse(res);
  if (!res.ok) throw new ApiError(res.status, data);
  const etag = res.headers.get('ETag');
  if (etag) cache.set(path, {etag, data});
  return {data, changed: true};
}

// A write; an Idempotency-Key makes a retried click create nothing twice.
export async function post(path, body = {}) {
  const key = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2);
  const res = await call('POST', path, body, {'Idempotency-Key': key});
  const data = await parse(res);
  if (!res.ok) throw new ApiError(res.status, data);
  cache.clear(); // what the write changed shows at the next poll
  return data;
}

// Every page of a list answer (`items` under `field`, nextCursor), up to `max` items.
export async function getAll(path, field, max = 5000) {
  const items = [];
  let cursor = '';
  let changed = false;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await get(`${path}${sep}limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    changed = changed || page.changed;
    items.push(...(page.data[field] || []));
    cursor = page.data.nextCursor;
    if (!cursor || items.length >= max) break;
  }
  return {data: items, changed};
}
