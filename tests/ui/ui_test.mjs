// ui_test: what a user of vram serve's dashboard sees, in Debian's chromium
// driven by playwright-core. Started by tests/cli/ui.sh, which runs the
// daemon on the simulated driver with models m1 and m2 and gives:
//   UI_URL (the daemon's dashboard address), UI_PROXY (its proxy's), UI_TOKEN, VRAM (the binary, with
//   VRAM_SOCKET and VRAM_SIM in the environment), UI_LOGS (the daemon's log
//   folder), UI_SHOTS (where the screenshots go); for vram ui and the pages
//   of other sites: UI_OPEN_URL (what `vram ui --no-open` printed for a
//   second daemon, without a token, its proxy at UI_V2_URL, its dashboard
//   at UI_V2_DASH, socket UI_V2_SOCKET, its model UI_V2_MODEL loaded, its
//   model "page" keeping the cookies it is sent in UI_V2_COOKIES), UI_OTHER_PORT (where this serves the other
//   sites' page: http://127.0.0.1:PORT is in the first daemon's origins =,
//   http://localhost:PORT in no list).
// Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed".
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const URL = process.env.UI_URL;
const PROXY = process.env.UI_PROXY;
const TOKEN = process.env.UI_TOKEN;
const VRAM = process.env.VRAM;
const LOGS = process.env.UI_LOGS;
const SHOTS = process.env.UI_SHOTS;
let pass = 0, fail = 0;

function ok(name) { pass++; console.log('ok - ' + name); }
function notOk(name, ...why) { fail++; console.log('not ok - ' + name); for (const w of why) console.log('#   ' + w); }
function expect(name, cond, ...why) { if (cond) ok(name); else notOk(name, ...why); }

function vram(...args) { return execFileSync(VRAM, args, { encoding: 'utf8', timeout: 60000 }); }
function psState(name, socket) {
  const j = JSON.parse(socket ? vram('ps', '--json', '--socket', socket) : vram('ps', '--json'));
  const m = j.models.find((x) => x.name === name);
  return m ? m.state : 'absent';
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// waits for fn() in the page; false when it did not come true in time
async function until(page, fn, arg, timeout = 5000) {
  try { await page.waitForFunction(fn, arg, { timeout, polling: 50 }); return true; } catch { return false; }
}

const profile = mkdtempSync(join(tmpdir(), 'vram-ui-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // no network here: Chromium's own background connections would only fail
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  viewport: { width: 1280, height: 720 },
  colorScheme: 'light',
});
const page = context.pages()[0] || await context.newPage();
const requests = [];
const assets = new Map();
page.on('request', (r) => requests.push(r.url()));
page.on('response', async (r) => {
  const u = new globalThis.URL(r.url());
  if (u.pathname.startsWith('/ui')) {
    try { assets.set(u.pathname, { size: (await r.body()).length, csp: r.headers()['content-security-policy'] || '' }); } catch { /* a redirect has no body */ }
  }
});
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error' && !/401|Unauthorized/.test(m.text())) errors.push(m.text()); });

const dataShown = () => page.evaluate(() => ({
  gpus: document.querySelectorAll('.gpu').length,
  rows: document.querySelectorAll('#models tbody tr').length,
  main: document.getElementById('main').checkVisibility(),
}));
const loginOpen = () => page.evaluate(() => document.getElementById('login').open);

try {
  // ---- the token ----
  await page.goto(URL + '/ui');
  expect('no token: the login prompt', await until(page, () => document.getElementById('login').open));
  let shown = await dataShown();
  expect('no token: no data on the page', !shown.gpus && !shown.rows && !shown.main, JSON.stringify(shown));

  await page.fill('#token', 'not-the-token');
  await page.click('#login-ok');
  expect('a wrong token: the prompt again, saying it was refused',
    await until(page, () => document.getElementById('login').open &&
      document.getElementById('login-why').textContent.includes('refused')));
  await sleep(500); // a late answer would show up here
  shown = await dataShown();
  expect('a wrong token: still no data', !shown.gpus && !shown.rows && !shown.main, JSON.stringify(shown));
  await page.screenshot({ path: join(SHOTS, 'ui-screenshot-login.png') });

  await page.fill('#token', TOKEN);
  await page.click('#login-ok');
  const status = JSON.parse(vram('status', '--json'));
  const ngpu = status.gpus.length;
  expect('the right token: one chart per GPU', await until(page, (n) => document.querySelectorAll('.gpu').length === n, ngpu),
    `want ${ngpu} GPUs`);
  expect('the right token: the prompt is gone', !(await loginOpen()));
  expect('the models table lists m1 and m2',
    await until(page, () => ['m1', 'm2'].every((n) => document.querySelector(`#models tr[data-model="${n}"]`))));

  // ---- a model's state follows the command line ----
  vram('load', 'm1');
  const t0 = Date.now();
  const seen = await until(page, () => {
    const s = document.querySelector('#models tr[data-model="m1"] .state');
    return s && s.textContent === 'ready';
  }, null, 2000);
  expect(`vram load m1: "ready" on screen within 2 s (${seen ? Date.now() - t0 + ' ms' : 'not seen'})`, seen);
  vram('load', 'm2');

  // ---- the chart: its parts add up to the card's total, and it draws them ----
  const g = status.gpus[0];
  expect('GPU 0\'s chart shows m1 among its parts',
    await until(page, () => {
      const li = document.querySelector('.gpu[data-gpu="0"] .legend li[data-part="model:m1"]');
      return li && +li.dataset.bytes > 0;
    }, null, 5000));
  await sleep(2500); // a few samples of history
  const chart = await page.evaluate(() => {
    const out = [];
    for (const sec of document.querySelectorAll('.gpu')) {
      const parts = [...sec.querySelectorAll('.legend li')].map((li) => ({
        part: li.dataset.part, bytes: +li.dataset.bytes,
        text: li.querySelector('.val').textContent,
        color: li.querySelector('.sw') ? getComputedStyle(li.querySelector('.sw')).backgroundColor : null,
      }));
      const c = sec.querySelector('canvas');
      const ctx = c.getContext('2d');
      // the newest sample is the right edge: read one column of pixels there
      const col = ctx.getImageData(c.width - 2, 0, 1, c.height).data;
      const px = [];
      for (let y = 0; y < c.height; y++) px.push([col[4 * y], col[4 * y + 1], col[4 * y + 2], col[4 * y + 3]]);
      out.push({ gpu: +sec.dataset.gpu, parts, height: c.height, px });
    }
    return out;
  });
  for (const c of chart) {
    const total = c.parts.find((p) => p.part === 'total');
    const parts = c.parts.filter((p) => p.part !== 'total');
    const sum = parts.reduce((a, p) => a + p.bytes, 0);
    const want = status.gpus.find((x) => x.index === c.gpu).memory.total;
    expect(`GPU ${c.gpu}: the parts add up to the card's total (${sum} of ${want} bytes)`,
      sum === want && total.bytes === want, JSON.stringify(parts.map((p) => [p.part, p.bytes])));
    const shownGiB = parts.reduce((a, p) => a + parseFloat(p.text) * (p.text.includes('MiB') ? 1 / 1024 : p.text.includes(' B ') ? 0 : 1), 0);
    expect(`GPU ${c.gpu}: the figures shown add up to the total shown (${shownGiB.toFixed(2)} GiB)`,
      Math.abs(shownGiB - parseFloat(total.text)) <= 0.01 * parts.length, total.text);
    for (const want of ['reserved', 'free']) {
      expect(`GPU ${c.gpu}: the legend names ${want}`, parts.some((p) => p.part === want));
    }
    // each pixel of the column goes to the part whose colour it is nearest
    const rgb = (s) => s.match(/\d+/g).slice(0, 3).map(Number);
    const cols = parts.map((p) => ({ part: p.part, rgb: rgb(p.color), px: 0 }));
    let blank = 0;
    for (const [r, gr, b, a] of c.px) {
      if (a < 128) { blank++; continue; }
      let best = null, bd = Infinity;
      for (const k of cols) {
        const d = (k.rgb[0] - r) ** 2 + (k.rgb[1] - gr) ** 2 + (k.rgb[2] - b) ** 2;
        if (d < bd) { bd = d; best = k; }
      }
      best.px++;
    }
    const off = cols.map((k) => {
      const want = (parts.find((p) => p.part === k.part).bytes / total.bytes) * c.height;
      return { part: k.part, px: k.px, want: +want.toFixed(1) };
    }).filter((k) => Math.abs(k.px - k.want) > 2.5);
    expect(`GPU ${c.gpu}: the chart draws every part at its height (${c.height} px column)`,
      blank <= 1 && off.length === 0, `blank ${blank}`, JSON.stringify(off));
  }

  // ---- the suspend button ----
  const btn = page.locator('#models tr[data-model="m1"] button[data-verb="suspend"]');
  await btn.waitFor({ state: 'visible' });
  expect('m1 ready: its suspend button is enabled', await until(page, () =>
    !document.querySelector('#models tr[data-model="m1"] button[data-verb="suspend"]').disabled));
  await btn.click();
  expect('suspend asks first', await until(page, () => document.getElementById('confirm').open &&
    document.getElementById('confirm-text').textContent.includes('m1')));
  await page.click('#confirm-ok');
  let st = '';
  for (let i = 0; i < 300 && st !== 'suspended'; i++) { st = psState('m1'); if (st !== 'suspended') await sleep(100); }
  expect('the suspend button suspends m1 (vram ps)', st === 'suspended', 'vram ps says ' + st);
  expect('the page shows m1 suspended', await until(page, () =>
    document.querySelector('#models tr[data-model="m1"] .state').textContent === 'suspended', null, 3000));
  expect('the event timeline shows m1 suspended', await until(page, () =>
    [...document.querySelectorAll('#events li')].some((li) => li.dataset.model === 'm1' && li.dataset.event === 'suspended'), null, 3000));

  // ---- the log ----
  await page.selectOption('#log-model', 'm1');
  expect('m1\'s log appears', await until(page, () =>
    document.getElementById('log').textContent.includes('testmodel m1:'), null, 5000),
  (await page.textContent('#log')).slice(-300));
  const marker = 'a line written now ' + process.pid;
  appendFileSync(join(LOGS, 'm1.log'), marker + '\n');
  expect('m1\'s log is followed live', await until(page, (m) =>
    document.getElementById('log').textContent.includes(m), marker, 5000));

  // ---- looks: 1280x720, a phone, dark ----
  await sleep(1500);
  const fits = () => page.evaluate(() => document.scrollingElement.scrollWidth <= window.innerWidth);
  expect('1280x720: nothing wider than the window', await fits());
  // every button of every model's row in full view: inside the models'
  // panel, and the element a click there reaches (a long model name must
  // not push the actions out of the panel)
  const hidden = await page.evaluate(() => {
    const panel = document.getElementById('models').closest('section').getBoundingClientRect();
    return [...document.querySelectorAll('#models td[data-col="actions"] button')].filter((b) => {
      const r = b.getBoundingClientRect();
      return r.left < panel.left || r.right > panel.right || r.right > window.innerWidth ||
        document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) !== b;
    }).map((b) => `${b.closest('tr').dataset.model}: ${b.textContent}`);
  });
  expect('1280x720: every model\'s actions in full view, a long name too', hidden.length === 0, ...hidden);
  await page.screenshot({ path: join(SHOTS, 'ui-screenshot.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await sleep(1200);
  expect('390x844 (a phone): nothing wider than the window', await fits(),
    String(await page.evaluate(() => document.scrollingElement.scrollWidth)));
  await page.screenshot({ path: join(SHOTS, 'ui-screenshot-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 720 });
  const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: 'dark' });
  await sleep(1200);
  const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(`dark: the page follows prefers-color-scheme (${light} -> ${dark})`, light !== dark);
  await page.screenshot({ path: join(SHOTS, 'ui-screenshot-dark.png') });
  await page.emulateMedia({ colorScheme: 'light' });

  // ---- what it asked for, and from where ----
  const origin = new globalThis.URL(URL).origin;
  const elsewhere = requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:'));
  expect('no request to any other host', elsewhere.length === 0, ...elsewhere);
  const page0 = assets.get('/ui');
  expect('the page is served with Content-Security-Policy default-src \'self\'',
    !!page0 && /default-src 'self'/.test(page0.csp), page0 ? page0.csp : 'no /ui response');
  const weight = [...assets.values()].reduce((a, x) => a + x.size, 0);
  expect(`the page weighs under 200 KB (${weight} bytes in ${assets.size} assets)`, weight > 0 && weight < 200 * 1024);
  expect('no script errors', errors.length === 0, ...errors);

  // ---- a stale token after signing in ----
  await page.evaluate(() => sessionStorage.setItem('vram-token', 'stale'));
  await page.reload();
  expect('a wrong token in the session: the prompt, not the data', await until(page, () =>
    document.getElementById('login').open));
  await sleep(500);
  shown = await dataShown();
  expect('a wrong token in the session: no data', !shown.gpus && !shown.rows && !shown.main, JSON.stringify(shown));
} catch (e) {
  notOk('the run ended early', String(e && e.stack || e));
  try { await page.screenshot({ path: join(SHOTS, 'ui-screenshot-failed.png') }); } catch { /* */ }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
if (process.env.UI_OPEN_URL) await openedByVramUi();
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);

/* vram ui's URL on a proxy without a token (issue 31), and pages of other
 * sites against both daemons (issues 28, 32), in a browser of their own. */
async function openedByVramUi() {
  const V2 = process.env.UI_V2_URL, SOCK = process.env.UI_V2_SOCKET, MODEL = process.env.UI_V2_MODEL;
  const DASH = process.env.UI_V2_DASH, COOKIES = process.env.UI_V2_COOKIES;
  const OTHER = Number(process.env.UI_OTHER_PORT);
  const prof = mkdtempSync(join(tmpdir(), 'vram-ui-open-'));
  const ctx = await chromium.launchPersistentContext(prof, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    viewport: { width: 1280, height: 720 },
  });
  const pg = ctx.pages()[0] || await ctx.newPage();
  const site = createServer((q, s) => { s.writeHead(200, { 'Content-Type': 'text/html' }); s.end('<!doctype html><title>elsewhere</title>'); });
  await new Promise((ok) => site.listen(OTHER, '127.0.0.1', ok));
  try {
    // the address the daemon's log gives, opened without vram ui's key
    await pg.goto(DASH + '/ui');
    expect('the dashboard\'s address without vram ui\'s key: a page that says to run vram ui, not a failing connection',
      await until(pg, () => {
        const d = document.getElementById('need-ui');
        return d.open && d.textContent.includes('vram ui --no-open') &&
          document.getElementById('conn').dataset.state === 'out' && !document.getElementById('note').textContent;
      }, null, 10000));
    await pg.screenshot({ path: join(SHOTS, 'ui-screenshot-need-ui.png') });
    await pg.goto(process.env.UI_OPEN_URL);
    expect('vram ui\'s URL, no token: the dashboard with both GPUs, no prompt', await until(pg, () =>
      document.querySelectorAll('.gpu').length === 2 && !document.getElementById('login').open, null, 10000));
    expect('... its model live, as ready', await until(pg, (n) => [...document.querySelectorAll('#models tbody tr')]
      .some((tr) => tr.textContent.includes(n) && tr.textContent.includes('ready')), MODEL, 10000));
    await pg.screenshot({ path: join(SHOTS, 'ui-screenshot-vram-ui.png') });
    expect('... the key and the session are gone from the address bar',
      !/key=|session=/.test(pg.url()), pg.url());
    const c = (await ctx.cookies()).find((x) => x.name.startsWith('vram_ui_'));
    expect('... a session cookie: HttpOnly, SameSite=Strict, Path=/',
      !!c && c.httpOnly && c.sameSite === 'Strict' && c.path === '/', JSON.stringify(c));
    await pg.reload();
    expect('a reload keeps the session', await until(pg, () => document.querySelectorAll('.gpu').length === 2, null, 10000));
    const value = await pg.evaluate(() => localStorage.getItem('vram-session'));
    const cookie = c ? `${c.name}=${c.value}` : '';
    const get = async (headers) => (await fetch(DASH + '/vram/v1/models', { headers })).status;
    expect('without the key or a session: 403', await get({}) === 403);
    expect('the cookie alone (what another server on another port of this name would be sent): 403',
      await get({ Cookie: cookie }) === 403);
    expect('the page\'s value alone: 403', await get({ 'X-Vram-Session': value || 'x' }) === 403);
    expect('both, as the page sends them: 200', await get({ Cookie: cookie, 'X-Vram-Session': value || 'x' }) === 200);

    // a model's page (issue 42, item 4): served under /m/NAME/, on the
    // proxy's origin, it once read the dashboard's session from
    // localStorage and unloaded another model through the control API
    await pg.goto(V2 + '/m/page/');
    const took = await pg.evaluate(async ([dash, model]) => {
      const stolen = localStorage.getItem('vram-session');
      const h = stolen ? { 'X-Vram-Session': stolen } : {};
      const status = async (u, o) => { try { return (await fetch(u, o)).status; } catch { return 'blocked'; } };
      const own = await status('/vram/v1/models', { headers: h, credentials: 'include' });
      const there = await status(dash + '/vram/v1/models', { headers: h, credentials: 'include' });
      await status('/vram/v1/models/' + model + '/unload', { method: 'POST', credentials: 'include',
        headers: { ...h, 'Content-Type': 'application/json' }, body: '{}' });
      await status(dash + '/vram/v1/models/' + model + '/unload', { method: 'POST', mode: 'no-cors',
        credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
      return { stolen, own, there };
    }, [DASH, MODEL]);
    expect('a model\'s page (/m/page/) finds no session of the dashboard\'s in its storage', took.stolen === null, JSON.stringify(took));
    expect('... gets nothing of the control API on its own origin (403)', took.own === 403, JSON.stringify(took));
    expect('... nor on the dashboard\'s', took.there !== 200, JSON.stringify(took));
    await sleep(300); /* an unload it had caused would be under way by now */
    expect('... nor unloads another model', psState(MODEL, SOCK) === 'ready', psState(MODEL, SOCK));
    const sent = existsSync(COOKIES) ? readFileSync(COOKIES, 'utf8') : '';
    expect('the model was sent no cookie of vram\'s', /^\/ cookie: /m.test(sent) && !sent.includes('vram_ui_'), sent);

    // a site listed nowhere: it can neither read nor unload (its POST is text/plain)
    await pg.goto(`http://localhost:${OTHER}/`);
    const read = await pg.evaluate(async ([v2, model]) => {
      let r = 'read';
      try { await (await fetch(v2 + '/api/ps')).text(); } catch { r = 'blocked'; }
      await fetch(v2 + '/api/generate', { method: 'POST', mode: 'no-cors',
        body: JSON.stringify({ model, keep_alive: 0 }) }).catch(() => {});
      return r;
    }, [V2, MODEL]);
    expect('a page of another site cannot read a proxy without a token', read === 'blocked', read);
    await sleep(300); /* an unload it had caused would be under way by now */
    expect('... nor unload its model with a text/plain POST', psState(MODEL, SOCK) === 'ready', psState(MODEL, SOCK));

    // a listed origin: Chromium preflights (Authorization, a JSON body), then reads
    await pg.goto(`http://127.0.0.1:${OTHER}/`);
    const listed = await pg.evaluate(async ([u, t]) => {
      try {
        const r = await fetch(u + '/v1/chat/completions', { method: 'POST',
          headers: { Authorization: 'Bearer ' + t, 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: 'm2', stream: true, messages: [] }) });
        return r.status + ' ' + ((await r.text()).includes('data:') ? 'streamed' : 'empty');
      } catch (e) { return String(e); }
    }, [PROXY, TOKEN]);
    expect('a listed origin (origins =): its preflighted POST is answered and read', listed === '200 streamed', listed);
  } catch (e) {
    notOk('the vram ui run ended early', String(e && e.stack || e));
  } finally {
    site.close();
    await ctx.close();
    rmSync(prof, { recursive: true, force: true });
  }
}
