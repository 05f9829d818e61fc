/* vram's dashboard. A client of the documented control API only
 * (docs/serve.md), under its /vram prefix: GET /v1/events?snapshot=1 gives
 * the GPUs (the document of `vram status --json`) and the models every
 * second and each event as it happens; GET /v1/models/NAME/log?follow=1 a
 * model's log; the buttons POST what `vram load|unload|suspend|resume` do.
 * Nothing here asks another host for anything (Content-Security-Policy
 * default-src 'self'). Data goes into the page as text, never as markup.
 * Opened by `vram ui`, the page gets a session: a cookie (HttpOnly) and,
 * in the URL's fragment, a value it keeps in this address's own storage
 * and sends as X-Vram-Session (docs/ui.md). */
'use strict';

const API = '/vram/v1';
const HISTORY_MS = 5 * 60 * 1000;
const TOKEN_KEY = 'vram-token';
const SESSION_KEY = 'vram-session';
const MAX_EVENTS = 200;
const MAX_LOG_CHUNKS = 1500;
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const $ = (id) => document.getElementById(id);

let token = sessionStorage.getItem(TOKEN_KEY) || '';
/* vram ui's redirect says #session=VALUE once; it is kept, and the URL cleaned */
if (location.hash.startsWith('#session=')) {
  localStorage.setItem(SESSION_KEY, location.hash.slice(9));
  history.replaceState(null, '', location.pathname);
}
let session = localStorage.getItem(SESSION_KEY) || '';
let models = [];            /* the last /v1/models */
let skewMs = 0;             /* the daemon's clock minus ours */
let live = null;            /* the event stream's AbortController */
let logFollow = null;       /* the log stream's AbortController */
let logName = '';
const gpus = new Map();     /* index -> {el, canvas, legend, title, sub, samples} */
const rows = new Map();     /* model name -> its table row's cells */

class Unauthorized extends Error {}

/* ---- formatting ---- */

function fmtBytes(b) {
  if (b == null) return '—';
  if (b >= GiB) return (b / GiB).toFixed(2) + ' GiB';
  if (b >= MiB) return (b / MiB).toFixed(0) + ' MiB';
  return b + ' B';
}

/* a number and its unit never part at the end of a line (a no-break space) */
function fmtSeconds(s) {
  if (s == null || !(s > 0)) return '—';
  if (s < 1) return Math.round(s * 1000) + '\u00a0ms';
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + '\u00a0s';
  if (s < 3600) return Math.floor(s / 60) + '\u00a0min ' + Math.floor(s % 60) + '\u00a0s';
  return Math.floor(s / 3600) + '\u00a0h ' + Math.floor((s % 3600) / 60) + '\u00a0min';
}

function fmtAgo(ms) {
  if (ms == null) return 'never';
  const s = Math.max(0, (Date.now() + skewMs - ms) / 1000);
  if (s < 1) return 'now';
  return (s < 60 ? Math.floor(s) + ' s' : fmtSeconds(Math.floor(s))) + ' ago';
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString([], {hour12: false});
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

function note(text, info) {
  const n = $('note');
  n.textContent = text || '';
  n.classList.toggle('info', !!info);
}

/* ---- the API ---- */

async function call(path, opts = {}) {
  const headers = Object.assign({}, opts.headers);
  if (token) headers.Authorization = 'Bearer ' + token;
  if (session) headers['X-Vram-Session'] = session;
  /* same-origin: the session's cookie goes (SameSite=Strict, this address only) */
  const r = await fetch(API + path, {...opts, headers, cache: 'no-store', credentials: 'same-origin'});
  if (r.status === 401) {
    if (session && !token) {
      session = ''; /* refused: a daemon started since (vram ui again), or another's */
      localStorage.removeItem(SESSION_KEY);
    }
    unauthorized();
    throw new Unauthorized('the token was refused');
  }
  if (r.status === 403 && !token) {
    /* a daemon without a token serves its API here only to vram ui's page */
    if (session) {
      session = '';
      localStorage.removeItem(SESSION_KEY);
    }
    needsUi();
    throw new Unauthorized('no session');
  }
  return r;
}

async function errorOf(r) {
  try {
    const j = await r.json();
    if (j && j.error) return j.error;
  } catch (e) { /* not JSON: the status says enough */ }
  return r.status + ' ' + r.statusText;
}

/* Reads server-sent events from a fetch (EventSource cannot send the
 * token): calls on(type, data) per event until the stream ends. */
async function sse(path, signal, on) {
  const r = await call(path, {signal, headers: {Accept: 'text/event-stream'}});
  if (!r.ok) throw new Error(await errorOf(r));
  const rd = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '', type = '', data = [];
  for (;;) {
    const {value, done} = await rd.read();
    if (done) return;
    buf += value;
    let at = 0;
    for (;;) {
      let i = at;
      while (i < buf.length && buf[i] !== '\n' && buf[i] !== '\r') i++;
      /* no whole line yet, or a \r that may be half of \r\n */
      if (i === buf.length || (buf[i] === '\r' && i === buf.length - 1)) break;
      const line = buf.slice(at, i);
      at = i + (buf[i] === '\r' && buf[i + 1] === '\n' ? 2 : 1);
      if (line === '') {
        if (data.length) on(type || 'message', data.join('\n'));
        type = '';
        data = [];
      } else if (line[0] !== ':') {
        const c = line.indexOf(':');
        const field = c < 0 ? line : line.slice(0, c);
        let v = c < 0 ? '' : line.slice(c + 1);
        if (v[0] === ' ') v = v.slice(1);
        if (field === 'event') type = v;
        else if (field === 'data') data.push(v);
      }
    }
    buf = buf.slice(at);
  }
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/* Runs a stream again after it ends or fails, backing off to 5 s. */
async function keep(path, ctl, on, onState) {
  let wait = 500;
  while (!ctl.signal.aborted) {
    try {
      await sse(path, ctl.signal, (t, d) => {
        wait = 500;
        onState('live');
        on(t, d);
      });
      onState('down', 'the stream ended; reconnecting');
    } catch (e) {
      if (e instanceof Unauthorized || ctl.signal.aborted) return;
      onState('down', e.message);
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 5000);
  }
}

/* ---- the token ---- */

function unauthorized() {
  const refused = !!token;
  token = '';
  sessionStorage.removeItem(TOKEN_KEY);
  stop();
  clearData();
  $('logout').hidden = true;
  $('login-why').textContent = refused
    ? 'The daemon refused that token. Enter the one in its configuration (token = in [serve]).'
    : 'This daemon asks for its token (token = in [serve] of its configuration), ' +
      'or run vram ui on its machine.';
  setConn('out');
  const d = $('login');
  if (!d.open) d.showModal();
  $('token').value = '';
  $('token').focus();
}

/* This address asks for no token: the page opens signed in from vram ui.
 * Said as such, not as a connection that keeps failing. */
function needsUi() {
  stop();
  clearData();
  $('logout').hidden = true;
  setConn('out', 'open this page with vram ui');
  note('');
  const d = $('need-ui');
  if (!d.open) d.showModal();
}

function signIn(ev) {
  ev.preventDefault();
  const t = $('token').value.trim();
  if (!t) return;
  token = t;
  sessionStorage.setItem(TOKEN_KEY, t);
  $('login').close();
  start();
}

function signOut() {
  token = ''; /* so that the prompt says nothing about a refusal */
  unauthorized();
}

/* What a refused token must not leave behind: every number on the page. */
function clearData() {
  $('main').hidden = true;
  models = [];
  for (const g of gpus.values()) g.el.remove();
  gpus.clear();
  for (const r of rows.values()) r.tr.remove();
  rows.clear();
  $('events').replaceChildren();
  $('log').replaceChildren();
  $('log-model').replaceChildren();
  logName = '';
}

function stop() {
  if (live) live.abort();
  if (logFollow) logFollow.abort();
  live = logFollow = null;
}

function setConn(state, why) {
  const c = $('conn');
  c.dataset.state = state;
  c.textContent = {live: 'live', down: 'reconnecting', out: 'signed out'}[state] || 'connecting';
  c.title = why || '';
}

/* ---- the GPUs ---- */

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

function modelColor(name) {
  let i = models.findIndex((m) => m.name === name);
  if (i < 0) for (const c of name) i = (i * 31 + c.charCodeAt(0)) >>> 0;
  return cssVar('--m' + (i % 8));
}

const FIXED = {
  reserved: 'driver reserve', display: 'desktop', other: 'other processes',
  unattributed: 'unattributed', free: 'free',
};

/* One GPU's memory by part, bottom to top; the parts add up to its total.
 * Models are matched to the processes the snapshot lists by pid (and
 * their direct children); without a process list, by what the daemon
 * placed there. */
function partsOf(g) {
  const b = g.breakdown;
  const byPid = new Map();
  for (const m of models) if (m.pid) byPid.set(m.pid, m.name);
  const mine = new Map();
  if (Array.isArray(g.processes)) {
    for (const p of g.processes) {
      const n = byPid.get(p.pid) || byPid.get(p.ppid);
      if (n && p.used) mine.set(n, (mine.get(n) || 0) + p.used);
    }
  } else {
    for (const m of models) if (m.gpu === g.index && m.vram_bytes) mine.set(m.name, m.vram_bytes);
  }
  const procs = b.workloads + b.other;
  let sum = 0;
  for (const v of mine.values()) sum += v;
  if (sum > procs) { /* the driver's figures disagree: scale the models into what it counted */
    let left = procs;
    for (const [k, v] of mine) {
      const s = Math.min(left, Math.floor((v * procs) / sum));
      mine.set(k, s);
      left -= s;
    }
    sum = procs - left;
  }
  const out = [['reserved', b.reserved], ['display', b.display]];
  for (const [k, v] of mine) out.push(['model:' + k, v]);
  out.push(['other', procs - sum], ['unattributed', b.unattributed], ['free', b.free]);
  return out;
}

function gpuView(index) {
  let v = gpus.get(index);
  if (v) return v;
  const sec = el('article', 'gpu');
  const head = el('header');
  const title = el('h2');
  const sub = el('span', 'sub');
  head.append(title, sub);
  const plot = el('div', 'plot');
  const canvas = el('canvas');
  canvas.setAttribute('role', 'img');
  plot.append(canvas);
  const axis = el('div', 'axis');
  axis.append(el('span', null, '−5 min'), el('span', null, 'now'));
  const legend = el('ul', 'legend');
  sec.append(head, plot, axis, legend);
  sec.dataset.gpu = index;
  v = {el: sec, canvas, legend, title, sub, samples: [], parts: []};
  gpus.set(index, v);
  const all = [...gpus.keys()].sort((a, b) => a - b);
  const next = all[all.indexOf(index) + 1];
  $('gpus').insertBefore(sec, next != null ? gpus.get(next).el : null);
  new ResizeObserver(() => draw(v)).observe(canvas);
  return v;
}

function onSnapshot(s) {
  skewMs = s.taken_ms - Date.now();
  const seen = new Set();
  for (const g of s.gpus || []) {
    if (!g.breakdown || !g.memory) continue;
    seen.add(g.index);
    const v = gpuView(g.index);
    const parts = partsOf(g);
    v.total = g.memory.total;
    v.samples.push({t: s.taken_ms, parts: new Map(parts)});
    while (v.samples.length && v.samples[0].t < s.taken_ms - HISTORY_MS - 2000) v.samples.shift();
    v.parts = parts;
    setText(v.title, 'GPU ' + g.index + ' · ' + g.name);
    const used = g.memory.total - g.breakdown.free;
    setText(v.sub, fmtBytes(g.memory.total) + ' · used ' + fmtBytes(used) + ' · free ' +
            fmtBytes(g.breakdown.free) + (g.display && g.display.active ? ' · display active' : ''));
    legend(v);
    draw(v);
  }
  for (const [i, v] of gpus) if (!seen.has(i)) { v.el.remove(); gpus.delete(i); }
  $('main').hidden = false;
}

function partLabel(key) {
  return key.startsWith('model:') ? key.slice(6) : FIXED[key];
}

function partColor(key) {
  return key.startsWith('model:') ? modelColor(key.slice(6)) : cssVar('--c-' + key);
}

function legend(v) {
  const items = [];
  for (const [key, bytes] of v.parts) {
    const li = el('li');
    li.dataset.part = key;
    li.dataset.bytes = bytes;
    const sw = el('span', 'sw');
    sw.style.background = partColor(key);
    li.append(sw, el('span', 'name', partLabel(key)),
              el('span', 'val', fmtBytes(bytes) + ' · ' + (100 * bytes / v.total).toFixed(1) + ' %'));
    items.push(li);
  }
  const tot = el('li', 'total');
  tot.dataset.part = 'total';
  tot.dataset.bytes = v.total;
  tot.append(el('span', 'name', 'total'), el('span', 'val', fmtBytes(v.total)));
  items.push(tot);
  v.legend.replaceChildren(...items);
  v.canvas.setAttribute('aria-label', 'memory of GPU ' + v.el.dataset.gpu + ' over the last 5 minutes: ' +
    v.parts.map(([k, b]) => partLabel(k) + ' ' + fmtBytes(b)).join(', '));
}

/* A stacked area per part over the last five minutes; the right edge is
 * the newest sample. */
function draw(v) {
  const c = v.canvas;
  const dpr = window.devicePixelRatio || 1;
  const W = Math.max(1, Math.round(c.clientWidth * dpr));
  const H = Math.max(1, Math.round(c.clientHeight * dpr));
  if (c.width !== W || c.height !== H) { c.width = W; c.height = H; }
  const ctx = c.getContext('2d');
  ctx.clearRect(0, 0, W, H);
  const n = v.samples.length;
  if (!n || !v.total) return;
  const now = v.samples[n - 1].t;
  const xs = v.samples.map((s) => W - ((now - s.t) / HISTORY_MS) * W);
  if (n === 1) xs[0] = 0; /* one sample: as wide as the chart, not a line */
  const keys = [];
  for (const s of v.samples) for (const k of s.parts.keys()) if (!keys.includes(k)) keys.push(k);
  const rank = (k) => (k === 'reserved' ? 0 : k === 'display' ? 1 : k.startsWith('model:') ? 2 :
    k === 'other' ? 3 : k === 'unattributed' ? 4 : 5);
  keys.sort((a, b) => rank(a) - rank(b));
  const below = new Float64Array(n);
  for (const k of keys) {
    const top = new Float64Array(n);
    for (let i = 0; i < n; i++) top[i] = below[i] + (v.samples[i].parts.get(k) || 0);
    const y = (b) => H - (b / v.total) * H;
    ctx.beginPath();
    ctx.moveTo(xs[0], y(top[0]));
    for (let i = 1; i < n; i++) ctx.lineTo(xs[i], y(top[i]));
    ctx.lineTo(W, y(top[n - 1]));
    ctx.lineTo(W, y(below[n - 1]));
    for (let i = n - 1; i >= 0; i--) ctx.lineTo(xs[i], y(below[i]));
    ctx.closePath();
    ctx.fillStyle = partColor(k);
    ctx.fill();
    below.set(top);
  }
}

/* ---- the models ---- */

const VERBS = {
  load: {label: 'Load', ok: (m) => ['stopped', 'failed', 'suspended'].includes(m.state),
    text: (m) => `Load ${m.name}? It is started (or resumed) now; idle models are evicted if its GPU lacks room.`},
  unload: {label: 'Unload', ok: (m) => m.state !== 'stopped',
    text: (m) => `Unload ${m.name}? Its process is stopped and its memory given back; requests in flight fail.`},
  suspend: {label: 'Suspend', ok: (m) => m.state === 'ready' && !m.holds,
    text: (m) => `Suspend ${m.name}? Its GPU memory moves to host RAM (${m.swap}); its process waits.`},
  resume: {label: 'Resume', ok: (m) => m.state === 'suspended',
    text: (m) => `Resume ${m.name}? Its memory comes back to the GPU.`},
};

const COLUMNS = ['name', 'state', 'gpu', 'vram', 'host', 'disk', 'swap', 'used', 'keep', 'inflight',
  'ttfb', 'switch', 'actions'];
const LABELS = {name: 'Model', state: 'State', gpu: 'GPU', vram: 'VRAM', host: 'Host RAM', disk: 'Disk', swap: 'Swap',
  used: 'Last use', keep: 'Keep-alive', inflight: 'In flight', ttfb: 'TTFB',
  switch: 'Start / suspend / resume', actions: ''};

function row(m) {
  let r = rows.get(m.name);
  if (r) return r;
  const tr = el('tr');
  tr.dataset.model = m.name;
  r = {tr, cells: {}, buttons: {}};
  for (const c of COLUMNS) {
    const td = el('td', c === 'name' ? 'name' :
      ['vram', 'host', 'disk', 'inflight', 'ttfb', 'switch'].includes(c) ? 'num' : null);
    td.dataset.label = LABELS[c];
    td.dataset.col = c;
    r.cells[c] = td;
    tr.append(td);
  }
  r.nameText = el('span');
  r.error = el('div', 'err');
  r.from = el('div', 'from');
  r.why = el('div', 'from');
  r.cells.name.append(r.nameText, r.from, r.why, r.error);
  r.state = el('span', 'state');
  r.cells.state.append(r.state);
  const acts = el('div', 'actions');
  for (const verb of Object.keys(VERBS)) {
    const b = el('button', null, VERBS[verb].label);
    b.type = 'button';
    b.dataset.verb = verb;
    b.addEventListener('click', () => act(m.name, verb));
    r.buttons[verb] = b;
    acts.append(b);
  }
  const lb = el('button', null, 'Log');
  lb.type = 'button';
  lb.addEventListener('click', () => { $('log-model').value = m.name; followLog(m.name); });
  acts.append(lb);
  r.cells.actions.append(acts);
  rows.set(m.name, r);
  return r;
}

/* keep_alive_ms: null when forever; expires_ms: when an idle resident
 * model is let go (null when it is not resident and idle) */
function keepAliveLeft(m) {
  if (!('keep_alive_ms' in m)) return '—';
  if (m.keep_alive_ms === null) return 'forever';
  if (m.expires_ms == null) return m.holds || m.inflight ? 'in use' : '—';
  const left = (m.expires_ms - (Date.now() + skewMs)) / 1000;
  return left > 0 ? fmtSeconds(Math.ceil(left)) : 'due';
}

function renderModels() {
  const tbody = $('models').tBodies[0];
  const names = new Set(models.map((m) => m.name));
  for (const [n, r] of rows) if (!names.has(n)) { r.tr.remove(); rows.delete(n); }
  let prev = null;
  for (const m of models) {
    const r = row(m);
    const c = r.cells;
    setText(r.nameText, m.name);
    setText(r.error, m.error || '');
    /* a model discover = found: its store, and what it last ran with */
    setText(r.from, m.source ? 'from ' + m.source +
      (m.ctx ? ` · -c ${m.ctx} -ngl ${m.ngl}/${m.layers}` : '') : '');
    /* why the scheduler moved it out (its last eviction), while it is out */
    const out = m.evicted && ['suspending', 'suspended', 'stopping', 'stopped'].includes(m.state);
    setText(r.why, !out ? '' : m.evicted.for
      ? `out for ${m.evicted.for}` + (m.evicted.request ? ` (${m.evicted.request})` : '')
      : 'out: unused for its keep-alive');
    r.why.title = out ? m.evicted.text : '';
    setText(r.state, m.state);
    r.state.dataset.s = m.state;
    setText(c.gpu, m.gpu == null ? '—' : String(m.gpu));
    setText(c.vram, m.vram_bytes ? fmtBytes(m.vram_bytes) : '—');
    setText(c.host, m.host_bytes ? fmtBytes(m.host_bytes) : '—');
    /* the disk tier: what host memory had no room for (docs/serve.md) */
    setText(c.disk, m.disk_bytes ? fmtBytes(m.disk_bytes) : '—');
    setText(c.swap, m.swap + (m.suspended_by && m.suspended_by !== m.swap ? ' (last: ' + m.suspended_by + ')' : ''));
    setText(c.used, fmtAgo(m.last_used_ms));
    setText(c.keep, keepAliveLeft(m));
    setText(c.inflight, String(m.inflight != null ? m.inflight : m.holds));
    setText(c.ttfb, fmtSeconds(m.last_ttfb_s));
    setText(c.switch, [m.last_start_s, m.last_suspend_s, m.last_resume_s].map(fmtSeconds).join(' / '));
    for (const [verb, b] of Object.entries(r.buttons)) b.disabled = !VERBS[verb].ok(m) || b.dataset.busy === '1';
    const want = prev ? prev.nextSibling : tbody.firstChild;
    if (want !== r.tr) tbody.insertBefore(r.tr, want);
    prev = r.tr;
  }
  const sel = $('log-model');
  const opts = [...sel.options].map((o) => o.value).join('\n');
  if (opts !== models.map((m) => m.name).join('\n')) {
    sel.replaceChildren(...models.map((m) => { const o = el('option', null, m.name); o.value = m.name; return o; }));
    if (logName && names.has(logName)) sel.value = logName;
  }
  if (!logName && models.length) followLog(models[0].name);
  $('main').hidden = false;
}

function ask(title, text) {
  const d = $('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  d.returnValue = '';
  d.showModal();
  $('confirm-ok').focus();
  return new Promise((ok) => d.addEventListener('close', () => ok(d.returnValue === 'ok'), {once: true}));
}

async function act(name, verb) {
  const m = models.find((x) => x.name === name);
  if (!m || !(await ask(VERBS[verb].label + ' ' + name, VERBS[verb].text(m)))) return;
  const b = rows.get(name) && rows.get(name).buttons[verb];
  if (b) { b.dataset.busy = '1'; b.disabled = true; }
  note(VERBS[verb].label.replace(/e?$/, 'ing') + ' ' + name + '…', true);
  try {
    const r = await call('/models/' + encodeURIComponent(name) + '/' + verb,
                         {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'});
    if (!r.ok) note(name + ': ' + (await errorOf(r)));
    else note('');
    refreshModels();
  } catch (e) {
    if (!(e instanceof Unauthorized)) note(name + ': ' + e.message);
  } finally {
    if (b) delete b.dataset.busy;
  }
}

let refreshing = false;
async function refreshModels() {
  if (refreshing) return;
  refreshing = true;
  try {
    const r = await call('/models');
    if (r.ok) { models = (await r.json()).models || []; renderModels(); }
  } catch (e) { /* the stream says when the daemon is away */ }
  refreshing = false;
}

/* ---- events ---- */

function onEvent(e) {
  const li = el('li');
  const t = el('time', null, clock(e.t_ms));
  t.dateTime = new Date(e.t_ms).toISOString();
  li.append(t, el('span', 'what', (e.model ? e.model + ' ' : '') + e.event),
            el('span', 'took', e.seconds > 0 ? fmtSeconds(e.seconds) : ''));
  if (e.detail) li.append(el('span', 'detail', e.detail));
  li.dataset.model = e.model;
  li.dataset.event = e.event;
  const list = $('events');
  list.prepend(li);
  while (list.children.length > MAX_EVENTS) list.lastChild.remove();
}

function onStream(type, data) {
  let j;
  try { j = JSON.parse(data); } catch (e) { return; }
  if (type === 'snapshot') onSnapshot(j);
  else if (type === 'models') { models = j.models || []; renderModels(); }
  else if (type === 'message') { onEvent(j); refreshModels(); }
}

/* ---- a model's log ---- */

function followLog(name) {
  if (logFollow) logFollow.abort();
  logName = name;
  const pre = $('log');
  pre.replaceChildren();
  if (!name) return;
  const ctl = new AbortController();
  logFollow = ctl;
  keep('/models/' + encodeURIComponent(name) + '/log?follow=1&lines=200', ctl, (type, data) => {
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    if (type === 'reset') pre.append(el('span', 'empty', '— the log started over —\n'));
    else pre.append(document.createTextNode(data + '\n'));
    while (pre.childNodes.length > MAX_LOG_CHUNKS) pre.firstChild.remove();
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  }, (state, why) => {
    if (state === 'down' && ctl === logFollow && why) pre.append(el('span', 'empty', '— ' + why + ' —\n'));
  });
}

/* ---- start ---- */

function start() {
  stop();
  clearData();
  $('logout').hidden = !token;
  setConn('connecting');
  const ctl = new AbortController();
  live = ctl;
  keep('/events?snapshot=1&history=100', ctl, onStream, (state, why) => {
    if (ctl !== live) return;
    setConn(state, why);
    if (state === 'down' && why) note(why);
    else if (state === 'live' && $('note').textContent.startsWith('the stream')) note('');
  });
}

document.addEventListener('DOMContentLoaded', () => {
  $('login-form').addEventListener('submit', signIn);
  $('login').addEventListener('cancel', (e) => e.preventDefault());
  $('need-ui').addEventListener('cancel', (e) => e.preventDefault());
  $('need-ui').addEventListener('close', () => start());
  $('logout').addEventListener('click', signOut);
  $('log-model').addEventListener('change', (e) => followLog(e.target.value));
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    for (const v of gpus.values()) { legend(v); draw(v); }
  });
  /* "last use" and "keep-alive" count on between updates */
  setInterval(() => { if (models.length) renderModels(); }, 1000);
  start();
});
