// ui_pages: keeps N tabs of vram serve's dashboard open in Debian's
// chromium for S seconds, signed in, for bench/ui_cpu.sh. Prints "open"
// once every tab shows its GPUs, then waits, then closes.
// usage: node bench/ui_pages.mjs URL TOKEN N SECONDS
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '../tests/ui/package.json'));
const { chromium } = require('playwright-core');
const [url, token, n, seconds] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'vram-ui-bench-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  viewport: { width: 1280, height: 720 },
});
try {
  const pages = [];
  for (let i = 0; i < +n; i++) {
    const page = i === 0 && context.pages()[0] ? context.pages()[0] : await context.newPage();
    await page.goto(url + '/ui');
    await page.fill('#token', token);
    await page.click('#login-ok');
    await page.waitForFunction(() => document.querySelectorAll('.gpu').length > 0, null, { timeout: 15000 });
    pages.push(page);
  }
  console.log('open');
  await new Promise((r) => setTimeout(r, +seconds * 1000));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
