// Drives the Session Keeper extension inside code-server with headless Chromium (playwright-core).
// Started by scripts/e2e.sh, which provides: E2E_URL, E2E_WORKSPACE, E2E_ARTIFACTS, E2E_STORE,
// FAKE_SERVER_LOG (only in fake-server mode). Prints one line per check and a closing
// "e2e: N passed, M failed"; exits 1 when any check failed.
import { chromium } from 'playwright-core';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const URL_BASE = env('E2E_URL');
const WS = env('E2E_WORKSPACE');
const ART = env('E2E_ARTIFACTS');
const STORE = process.env.E2E_STORE;
const FAKE_LOG = process.env.FAKE_SERVER_LOG;
const TIMEOUT = Number(process.env.E2E_TIMEOUT_MS ?? 60000);
// fake: the canned scenario of test/e2e/fake_server.py; real: store-independent smoke checks.
const MODE = process.env.E2E_SERVER ?? 'fake';
mkdirSync(ART, { recursive: true });

let passed = 0;
let failed = 0;
const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1);

/** Runs one check; a failure is recorded (with a screenshot) and the run goes on. */
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name} (${secs()} s)`);
    return true;
  } catch (err) {
    failed++;
    console.log(`not ok - ${name} (${secs()} s)\n  ${String(err?.message ?? err).split('\n').slice(0, 6).join('\n  ')}`);
    await page?.screenshot({ path: join(ART, `FAILED-${name.replace(/[^a-z0-9]+/gi, '-')}.png`) }).catch(() => {});
    return false;
  }
}

function fakeLog() {
  if (!FAKE_LOG || !existsSync(FAKE_LOG)) return [];
  return readFileSync(FAKE_LOG, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
let page;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  const statusbar = page.locator('#workbench\\.parts\\.statusbar');
  const quickInput = page.locator('.quick-input-widget');
  const rows = quickInput.locator('.monaco-list-row');
  const row = (text) => rows.filter({ hasText: text }).first();
  const skItem = (text) => statusbar.locator('.statusbar-item', { hasText: text }).first();
  const shot = (name) => page.screenshot({ path: join(ART, name) });

  async function runCommand(title) {
    await page.keyboard.press('F1');
    const input = quickInput.locator('input');
    await input.waitFor();
    await input.fill(`>${title}`);
    await row(title).waitFor();
    await page.keyboard.press('Enter');
  }

  await page.goto(`${URL_BASE}/?folder=${encodeURIComponent(WS)}`, { waitUntil: 'domcontentloaded' });

  await check('workbench loads', () => statusbar.waitFor());

  const ownItem = statusbar.locator('[id="sessionkeeper.session-keeper.sessionKeeper.status"]');

  if (MODE === 'real') {
    await check('the real server starts and the status item leaves "starting"', async () => {
      await ownItem.waitFor();
      const deadline = Date.now() + TIMEOUT;
      for (;;) {
        const label = (await ownItem.getAttribute('aria-label')) ?? '';
        if (/^debug-disconnect/.test(label)) throw new Error(`server failed: ${label}`);
        if (!/^sync~spin/.test(label)) break;
        if (Date.now() > deadline) throw new Error('still starting');
        await page.waitForTimeout(100);
      }
      await shot('01-status-bar.png');
    });
    await check('the picker lists this workspace (lazily, on open)', async () => {
      await ownItem.click();
      await quickInput.locator('input:not([placeholder="Loading sessions…"])').waitFor();
      const ph = await quickInput.locator('input').getAttribute('placeholder');
      if (!/Pick a session|No sessions recorded/.test(ph ?? '')) throw new Error(`placeholder: ${ph}`);
      await shot('02-picker.png');
      await page.keyboard.press('Escape');
    });
  } else {
    await check('status bar shows the current thread from session/didChange', async () => {
      const item = skItem('Fix payment rounding');
      await item.waitFor();
      const text = (await item.innerText()).replace(/\s+/g, ' ');
      for (const part of ['fix/payment', '3/5', '7/9']) if (!text.includes(part)) throw new Error(`status "${text}" lacks ${part}`);
      await shot('01-status-bar.png');
    });

    await check('server was started with --stdio, the store path and the workspace cwd', async () => {
      if (!FAKE_LOG) return; // real server: nothing to read
      const init = fakeLog().find((e) => e.method === 'initialized');
      if (!init) throw new Error('fake server never saw initialized');
      if (!init.params.argv.includes('--stdio')) throw new Error(`argv ${init.params.argv}`);
      if (STORE && init.params.home !== STORE) throw new Error(`SESSIONKEEPER_HOME=${init.params.home}`);
      if (init.params.cwd !== WS) throw new Error(`cwd=${init.params.cwd}`);
    });

    await check('nothing is listed before the picker opens (lazy)', async () => {
      if (!FAKE_LOG) return;
      if (fakeLog().some((e) => e.method === 'session/list')) throw new Error('session/list was called at start-up');
    });

    await check('clicking the status item opens the picker with this workspace\'s threads, newest first', async () => {
      await skItem('Fix payment rounding').click();
      await row('Migrate store').waitFor();
      const labels = await rows.allInnerTexts();
      const order = ['Fix payment rounding', 'Refactor ledger', 'Migrate store'].map((t) => labels.findIndex((l) => l.includes(t)));
      if (order.some((i) => i < 0) || !(order[0] < order[1] && order[1] < order[2])) throw new Error(`rows: ${JSON.stringify(labels)}`);
      if (!labels.some((l) => l.includes('Load more'))) throw new Error('no Load more… row');
      if (!labels.some((l) => l.includes('todos 3/5') && l.includes('tests 7/9'))) throw new Error('no progress in rows');
      if (FAKE_LOG) {
        const list = fakeLog().find((e) => e.method === 'session/list');
        if (list?.params.workspace !== WS) throw new Error(`listed workspace ${list?.params.workspace}`);
      }
      await shot('02-picker.png');
    });

    await check('Load more… fetches the next page', async () => {
      await row('Load more').click();
      await row('Add CSV export').waitFor();
      if (FAKE_LOG && !fakeLog().some((e) => e.method === 'session/list' && e.params.cursor === '3')) throw new Error('no cursor request');
      await shot('03-picker-page-2.png');
    });

    await check('resuming a drifted thread shows every difference in a modal', async () => {
      await row('Refactor ledger').click();
      await row('Resume').waitFor();
      await shot('04-actions.png');
      await row('Resume').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor();
      const text = await dialog.innerText();
      for (const part of ['Branch: recorded refactor/ledger → now main', 'File changed', 'git checkout refactor/ledger',
        'Continue anyway', 'Switch back', 'Fork here', 'Cancel']) {
        if (!text.includes(part)) throw new Error(`dialog lacks "${part}":\n${text}`);
      }
      await shot('05-drift-dialog.png');
      await dialog.getByRole('button', { name: 'Continue anyway', exact: true }).click();
    });

    await check('continuing shows what came back and the status bar follows', async () => {
      const toast = page.locator('.notification-toast', { hasText: 'Resumed “Refactor ledger”' });
      await toast.waitFor();
      const text = await toast.innerText();
      for (const part of ['todos 1/4', 'tests 12/12 (stale)', 'op-17']) if (!text.includes(part)) throw new Error(`toast lacks ${part}: ${text}`);
      await skItem('Refactor ledger').waitFor();
      if (FAKE_LOG) {
        const r = fakeLog().find((e) => e.method === 'session/resume');
        if (r?.params.decision !== 'continue' || r?.params.workspace !== WS) throw new Error(`resume params ${JSON.stringify(r?.params)}`);
      }
      await page.waitForTimeout(300);
      await shot('06-resumed.png');
    });

    await check('Show Details opens the read-only timeline document', async () => {
      await runCommand('Session Keeper: Show Session Details…');
      await row('Fix payment rounding').click();
      const editor = page.locator('.editor-instance .view-lines');
      await editor.filter({ hasText: 'Timeline' }).first().waitFor();
      const tab = page.locator('.tab', { hasText: '.md' }).first();
      await tab.waitFor();
      await shot('07-details.png');
    });

    await check('a blocked thread explains why and offers Relocate / Fork / Export', async () => {
      await runCommand('Session Keeper: Resume…');
      await row('Migrate store').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor();
      const text = await dialog.innerText();
      for (const part of ['cannot be resumed', 'Working directory missing: recorded /srv/old-checkout → now missing', 'Relocate', 'Fork', 'Export']) {
        if (!text.includes(part)) throw new Error(`dialog lacks "${part}":\n${text}`);
      }
      await shot('08-blocked-dialog.png');
      await dialog.getByRole('button', { name: 'Export', exact: true }).click();
      await page.locator('.editor-instance .view-lines').filter({ hasText: '"timeline"' }).first().waitFor();
      if (FAKE_LOG && fakeLog().some((e) => e.method === 'session/resume' && e.params.thread_id.startsWith('00000003'))) {
        throw new Error('a blocked thread was resumed');
      }
      await shot('09-exported.png');
    });

    await check('Rebuild Session Index reports the counts', async () => {
      await runCommand('Session Keeper: Rebuild Session Index');
      await page.locator('.notification-toast', { hasText: 'indexed 5 threads and 8 sessions' }).waitFor();
    });

    await check('Restart Server starts a new server and the status comes back', async () => {
      const before = fakeLog().filter((e) => e.method === 'initialized').length;
      await runCommand('Session Keeper: Restart Server');
      const deadline = Date.now() + TIMEOUT;
      while (FAKE_LOG && fakeLog().filter((e) => e.method === 'initialized').length <= before) {
        if (Date.now() > deadline) throw new Error('no second initialize');
        await page.waitForTimeout(100);
      }
      await skItem('Fix payment rounding').waitFor();
      await shot('10-after-restart.png');
    });
  }
} catch (err) {
  failed++;
  console.log(`not ok - e2e driver crashed: ${err?.stack ?? err}`);
} finally {
  await browser.close().catch(() => {});
}
console.log(`e2e: ${passed} passed, ${failed} failed (${secs()} s in the browser)`);
process.exit(failed ? 1 : 0);
