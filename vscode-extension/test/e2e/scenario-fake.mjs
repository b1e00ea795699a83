// The canned scenario of fake_server.py (E2E_SERVER=fake): every screen of the extension.
// Runs inside run.mjs, which provides the page, the check() recorder and the helpers.
import { readFileSync } from 'node:fs';

export async function fakeScenario(t) {
  const { check, page, quickInput, rows, row, skItem, ownItem, shot, runCommand, fakeLog, WS, STORE, FAKE_LOG, TIMEOUT } = t;
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
    for (const part of ['todos: 1/4 done', 'verifier: tests 12/12 passed (stale)', 'op-17']) if (!text.includes(part)) throw new Error(`toast lacks ${part}: ${text}`);
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
    const toast = page.locator('.notification-toast', { hasText: 'exported “Migrate store” to' });
    await toast.waitFor();
    await toast.getByRole('button', { name: 'Open', exact: true }).click();
    await page.locator('.tab', { hasText: 'export-00000003' }).first().waitFor();
    const r = fakeLog().filter((e) => e.method === 'session/resume' && e.params.thread_id.startsWith('00000003'));
    if (r.length !== 1 || r[0].params.decision !== 'export') throw new Error(`blocked thread requests: ${JSON.stringify(r)}`);
    await shot('09-exported.png');
  });

  await check('Switch back shows the git command once and resumes nothing', async () => {
    const resumesBefore = fakeLog().filter((e) => e.method === 'session/resume').length;
    await runCommand('Session Keeper: Resume…');
    await row('Refactor ledger').click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Switch back', exact: true }).click();
    const toasts = page.locator('.notification-toast', { hasText: 'git checkout refactor/ledger' });
    await toasts.first().waitFor();
    await page.waitForTimeout(500);
    if ((await toasts.count()) !== 1) throw new Error(`${await toasts.count()} toasts with the git command`);
    const r = fakeLog().filter((e) => e.method === 'session/resume').slice(resumesBefore);
    if (r.length !== 1 || r[0].params.decision !== 'switch_back') throw new Error(JSON.stringify(r));
    await shot('10-switch-back.png');
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
    await shot('11-after-restart.png');
  });

  await check('changing sessionKeeper.storePath restarts the server with the new SESSIONKEEPER_HOME', async () => {
    const file = process.env.E2E_SETTINGS;
    if (!file || !FAKE_LOG) throw new Error('E2E_SETTINGS / FAKE_SERVER_LOG not set');
    const settings = JSON.parse(readFileSync(file, 'utf8'));
    const newStore = `${STORE}-moved`;
    // Edit through the editor (a write behind its back is not reliably seen by code-server).
    await runCommand('Preferences: Open User Settings (JSON)');
    const editor = page.locator('.editor-instance .monaco-editor').filter({ hasText: 'sessionKeeper.storePath' }).first();
    await editor.waitFor();
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    // One line, inserted like a paste: no auto-indent or auto-closed brackets.
    await page.keyboard.insertText(JSON.stringify({ ...settings, 'sessionKeeper.storePath': newStore }));
    await page.keyboard.press('Control+S');
    const deadline = Date.now() + TIMEOUT;
    while (!fakeLog().some((e) => e.method === 'initialized' && e.params.home === newStore)) {
      if (Date.now() > deadline) throw new Error('no restart with the new store');
      await page.waitForTimeout(100);
    }
    await skItem('Fix payment rounding').waitFor();
  });
}
