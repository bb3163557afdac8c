// The dashboard's shell: signing in (a token from the URL fragment, #token=..., which
// browsers never send to the server, or from the form), the hash router, and the live
// poll. Each view is a module exporting {title, fetch(params, ctx), draw(el, data, ctx, fresh)}:
// fetch returns {data, changed} through api.js's conditional GETs, and draw runs only
// when something changed, so an idle dashboard costs corrald a few 304s. A view adds its
// event listeners (delegated, on `el`) when `fresh`, its first draw after navigation.

import * as api from './api.js';
import {esc} from './format.js';
import queue from './view_queue.js';
import {jobList, jobDetail} from './view_job.js';
import fleet from './view_fleet.js';
import {overTime, quotas} from './view_history.js';
import cost from './view_cost.js';
import audit from './view_audit.js';

const POLL_MS = 3000;
const routes = [
  [/^\/queue$/, queue],
  [/^\/jobs$/, jobList],
  [/^\/jobs\/(\d+)$/, jobDetail],
  [/^\/fleet$/, fleet],
  [/^\/history$/, overTime],
  [/^\/quotas$/, quotas],
  [/^\/cost$/, cost],
  [/^\/audit$/, audit],
];

const $ = (id) => document.getElementById(id);
const ctx = {who: null, state: {}, redraw: () => refresh(true), navigate: (h) => { location.hash = h; }};
let current = null; // {view, params, key}
let timer = null;
let busy = false;

// A token in the fragment signs in and is removed from the address bar at once.
function takeFragmentToken() {
  const m = location.hash.match(/^#token=([^&]+)/);
  if (!m) return;
  api.setToken(decodeURIComponent(m[1]));
  history.replaceState(null, '', `${location.pathname}#/queue`);
}

async function signIn() {
  try {
    const {data} = await api.get('/v1/whoami');
    if (data.role !== 'admin' && data.role !== 'member') {
      throw new api.ApiError(403, {error: {message: `a ${data.role} token cannot use the dashboard`}});
    }
    ctx.who = data;
  } catch (e) {
    api.setToken('');
    showLogin(e.status === 401 ? 'That token is not valid.' : e.message);
    return;
  }
  $('login').hidden = true;
  $('nav').hidden = false;
  $('signout').hidden = false;
  for (const a of document.querySelectorAll('#nav [data-role="admin"]')) a.hidden = ctx.who.role !== 'admin';
  $('who').textContent = ctx.who.role === 'admin' ? 'admin' : `member of ${ctx.who.tenant}`;
  document.body.dataset.role = ctx.who.role;
  if (!location.hash || location.hash === '#' || location.hash === '#/') location.hash = '#/queue';
  route();
}

function showLogin(message = '') {
  clearTimeout(timer);
  ctx.who = null;
  ctx.state = {}; // the next user starts from the default views
  current = null;
  $('view').innerHTML = '';
  $('nav').hidden = true;
  $('signout').hidden = true;
  $('who').textContent = '';
  $('login').hidden = false;
  $('login-error').textContent = message;
  $('token').focus();
}

function route() {
  if (!ctx.who) return;
  const path = location.hash.replace(/^#/, '') || '/queue';
  for (const [re, view] of routes) {
    const m = path.match(re);
    if (!m) continue;
    current = {view, params: m.slice(1), key: path};
    for (const a of document.querySelectorAll('#nav a')) {
      const here = path.startsWith(a.getAttribute('href').slice(1));
      if (here) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    document.title = `${view.title} · Corral`;
    ctx.notify('');
    // A fresh element drops the listeners the previous view added on its first draw.
    const fresh = $('view').cloneNode(false);
    $('view').replaceWith(fresh);
    fresh.innerHTML = `<p class="loading">Loading ${esc(view.title.toLowerCase())}…</p>`;
    document.body.dataset.view = '';
    refresh();
    return;
  }
  $('view').innerHTML = '<h1>Not found</h1><p><a href="#/queue">Go to the queue</a></p>';
}

// Fetches the current view's data and draws it if it changed, on its first fetch, or
// when `force`d.
async function refresh(force = false) {
  clearTimeout(timer);
  if (!current || busy) {
    timer = setTimeout(() => refresh(), POLL_MS);
    return;
  }
  busy = true;
  const shown = current;
  try {
    const {data, changed} = await shown.view.fetch(shown.params, ctx);
    if (shown !== current) return; // navigated away meanwhile
    const first = !shown.drawn;
    if (changed || force || first) {
      const el = $('view');
      const active = document.activeElement;
      const focused = active?.dataset?.key;
      const caret = typeof active?.selectionStart === 'number' ? [active.selectionStart, active.selectionEnd] : null;
      shown.drawn = true;
      shown.view.draw(el, data, ctx, first);
      const again = focused && el.querySelector(`[data-key="${CSS.escape(focused)}"]`);
      if (again) {
        again.focus();
        if (caret && again.setSelectionRange) again.setSelectionRange(...caret);
      }
      document.body.dataset.view = shown.key;
    }
    $('live').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    if (e.status === 401) return showLogin('The token was refused; sign in again.');
    if (shown === current) {
      $('live').textContent = `not updated: ${e.message}`;
      if (!shown.drawn) {
        $('view').innerHTML = `<p class="error" role="alert">${esc(e.message)}</p>`;
        document.body.dataset.view = shown.key;
      }
    }
  } finally {
    busy = false;
    if (ctx.who) timer = setTimeout(() => refresh(), POLL_MS);
  }
}

// A message about an action (a refused drain, say) above the view, until the next one.
ctx.notify = (message) => {
  $('notice').textContent = message;
  $('notice').hidden = !message;
};

// A confirmation for an admin action; resolves to the reason typed, or null.
ctx.confirm = (title, text, {reason = true} = {}) => new Promise((resolve) => {
  const d = $('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-reason-label').hidden = !reason;
  $('confirm-reason').value = '';
  d.returnValue = '';
  // Confirm is the form's one submit button, so Enter in the reason confirms.
  $('confirm-cancel').onclick = () => d.close('cancel');
  // A close event is dispatched after the dialog closed, as a task of its own: the close
  // of the last confirmation may arrive after this one opened, and must not answer it.
  d.onclose = () => {
    if (!d.open) resolve(d.returnValue === 'ok' ? $('confirm-reason').value : null);
  };
  d.showModal();
  (reason ? $('confirm-reason') : $('confirm-ok')).focus();
});

$('login').addEventListener('submit', (e) => {
  e.preventDefault();
  api.setToken($('token').value.trim());
  $('token').value = '';
  signIn();
});
$('signout').addEventListener('click', () => {
  api.setToken('');
  showLogin();
});
window.addEventListener('hashchange', () => {
  if (location.hash.startsWith('#token=')) {
    takeFragmentToken();
    signIn();
  } else {
    route();
  }
});

takeFragmentToken();
if (api.token()) signIn();
else showLogin();
