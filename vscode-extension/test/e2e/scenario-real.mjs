// The real `sessionkeeper serve` (E2E_SERVER=real) against a store seeded by scripts/e2e.sh with
// the real CLI in a scratch git repo (E2E_SEED, a JSON file):
//   "Clean thread"   recorded on main, which is checked out: todos 1/3, tests 7/9 -> resumes ok;
//   "Drifted thread" recorded on fix/payment, then `git checkout main`        -> resume drifts.
// Runs inside run.mjs, which provides the page, the check() recorder and the helpers. Every step
// is a counted check; nothing is skipped (a missing seed is a failed check).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export async function realScenario(t) {
  const { check, page, quickInput, rows, row, ownItem, shot, runCommand, STORE, TIMEOUT } = t;
  const seedFile = process.env.E2E_SEED;
  const seed = seedFile && existsSync(seedFile) ? JSON.parse(readFileSync(seedFile, 'utf8')) : undefined;
  const { clean, drifted } = seed ?? {};

  // The item's aria-label: its text with codicons spelled out, then ", " and the tooltip.
  const label = async () => ((await ownItem.getAttribute('aria-label')) ?? '').replace(/\s+/g, ' ');
  /** Waits until the status item's aria-label (codicons spelled out) matches `re`. */
  async function waitStatus(re, what) {
    const deadline = Date.now() + TIMEOUT;
    for (;;) {
      const l = await label();
      if (re.test(l)) return l;
      if (Date.now() > deadline) throw new Error(`status bar never showed ${what}; it shows "${l}"`);
      await page.waitForTimeout(100);
    }
  }
  /** The store as the real CLI sees it (newest first). */
  function storeThreads() {
    const py = process.env.E2E_PYTHON;
    if (!py) throw new Error('E2E_PYTHON is not set');
    const out = execFileSync(py, ['-m', 'sessionkeeper', '--store', STORE, 'list', '--json'], {
      env: { ...process.env, SESSIONKEEPER_HOME: STORE }, encoding: 'utf8',
    });
    return JSON.parse(out);
  }
  /** Opens the picker from the status item; resolves to the thread rows' texts, top to bottom. */
  async function openPicker() {
    await ownItem.click();
    await quickInput.locator('.quick-input-title', { hasText: 'Session Keeper: Sessions' }).waitFor();
    await quickInput.locator('input:not([placeholder="Loading sessions…"])').waitFor();
    const ph = await quickInput.locator('input').getAttribute('placeholder');
    if (!/Pick a session/.test(ph ?? '')) throw new Error(`picker placeholder: ${ph}`);
    return (await rows.allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim()).filter((s) => / sessions? /.test(`${s} `));
  }
  const mustInclude = (what, text, parts) => {
    for (const p of parts) if (!text.includes(p)) throw new Error(`${what} lacks "${p}": ${text}`);
  };

  await check('the store was seeded with a clean and a drifted thread (real CLI)', async () => {
    if (!seed) throw new Error(`E2E_SEED missing or unreadable (${seedFile}): scripts/e2e.sh must seed the real store`);
    const ids = storeThreads().map((x) => x.thread_id);
    if (ids.length !== 2 || !ids.includes(clean.thread_id) || !ids.includes(drifted.thread_id)) throw new Error(`store: ${ids}`);
  });

  await check('the real server starts and the status bar shows "No session" (nothing resumed yet)', async () => {
    await ownItem.waitFor();
    const deadline = Date.now() + TIMEOUT;
    for (;;) {
      const l = await label();
      if (/^debug-disconnect/.test(l)) throw new Error(`server failed: ${l}`);
      if (!/^sync~spin/.test(l)) break;
      if (Date.now() > deadline) throw new Error('still starting');
      await page.waitForTimeout(100);
    }
    if (!/No session/.test(await label())) throw new Error(`status: ${await label()}`);
    await shot('01-status-bar-no-session.png');
  });

  if (!seed) return;

  await check('the picker lists both threads, newest first, with branch, progress and resume state', async () => {
    const list = await openPicker();
    if (list.length !== 2) throw new Error(`${list.length} thread rows: ${JSON.stringify(list)}`);
    // Drifted was recorded after Clean, so it is first.
    if (!list[0].includes(drifted.title) || !list[1].includes(clean.title)) throw new Error(`order: ${JSON.stringify(list)}`);
    mustInclude('drifted row', list[0], ['fix/payment', 'todos 0/2', 'tests not run', 'drift']);
    mustInclude('clean row', list[1], ['main', 'todos 1/3', 'tests 7/9']);
    if (list[1].includes('drift')) throw new Error(`the clean row says drift: ${list[1]}`);
    await shot('02-picker-two-threads.png');
    await page.keyboard.press('Escape');
  });

  await check('Resume on the drifted thread shows every difference (branch fix/payment → main)', async () => {
    await runCommand('Session Keeper: Resume…');
    await row(drifted.title).click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    mustInclude('drift dialog', await dialog.innerText(), [
      `“${drifted.title}” was recorded in a different environment (1 difference)`,
      'Branch: recorded fix/payment → now main', 'git checkout fix/payment',
      'Continue anyway', 'Switch back', 'Fork here']);
    await shot('03-drift-dialog.png');
  });

  let forkId;
  await check('choosing Fork here creates a new thread and the status bar shows it', async () => {
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.getByRole('button', { name: 'Fork here', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    const toast = page.locator('.notification-toast', { hasText: `Forked “${drifted.title}”` }).first();
    await toast.waitFor();
    // The fork is recorded in this environment; it does not continue over the differences.
    if ((await toast.innerText()).includes('Continuing over')) throw new Error(`fork toast: ${await toast.innerText()}`);
    // The fork is recorded here (branch main) and is not a drift: no warning icon.
    await waitStatus(new RegExp(`^history\\s+${drifted.title} \\(fork\\)\\s+git-branch\\s+main\\b`), `the fork "${drifted.title} (fork)" on main`);
    const threads = storeThreads();
    const fork = threads.find((x) => x.thread_id !== clean.thread_id && x.thread_id !== drifted.thread_id);
    if (threads.length !== 3 || !fork) throw new Error(`store after fork: ${JSON.stringify(threads.map((x) => [x.title, x.thread_id]))}`);
    const ff = fork.forked_from;
    const from = ff?.thread_id;
    if (from !== drifted.thread_id) throw new Error(`fork ${fork.thread_id} forked_from ${JSON.stringify(fork.forked_from)}`);
    forkId = fork.thread_id;
    // The current thread is the fork, not the drifted original: its id is in the tooltip.
    await ownItem.hover();
    await page.locator('.monaco-hover, .workbench-hover').filter({ hasText: `Thread: ${forkId}` }).first().waitFor();
    await page.waitForTimeout(400); // the hover fades in
    await shot('04-forked-status-bar.png');
    await page.mouse.move(700, 300);
  });

  await check('the picker then lists 3 threads, the fork (on main) first', async () => {
    const list = await openPicker();
    if (list.length !== 3) throw new Error(`${list.length} thread rows: ${JSON.stringify(list)}`);
    if (!list[0].includes(`${drifted.title} (fork)`) || !list[0].includes('main')) throw new Error(`first row: ${list[0]}`);
    if (list.filter((s) => s.includes(drifted.title)).length !== 2) throw new Error(`rows: ${JSON.stringify(list)}`);
    await shot('05-picker-three-threads.png');
    await page.keyboard.press('Escape');
  });

  await check('Resume on the clean thread (from the picker) restores it without a dialog: todos 1/3, tests 7/9', async () => {
    await openPicker();
    await row(clean.title).click();
    await row('Resume').waitFor();
    await row('Resume').click();
    const toast = page.locator('.notification-toast', { hasText: `Resumed “${clean.title}”` }).first();
    await toast.waitFor();
    mustInclude('resume toast', (await toast.innerText()).replace(/\s+/g, ' '), ['todos: 1/3 done', 'tests 7/9 passed']);
    if (await page.locator('.monaco-dialog-box').count()) throw new Error('a dialog was shown for a clean thread');
    const l = await waitStatus(new RegExp(`^history\\s+${clean.title}\\b`), `"${clean.title}"`);
    mustInclude('status bar', l, ['git-branch main', 'checklist 1/3', 'beaker 7/9']);
    const text = (await ownItem.innerText()).replace(/\s+/g, ' ');
    mustInclude('status bar text', text, [clean.title, 'main', '1/3', '7/9']);
    await page.waitForTimeout(300);
    await shot('06-clean-resumed-status-bar.png');
  });

  await check('the status bar shows the current thread: title, and its id in the tooltip', async () => {
    // Toasts can cover the hover; clear them first.
    await runCommand('Notifications: Clear All Notifications');
    if (!(await ownItem.innerText()).includes(clean.title)) throw new Error(`status text: ${await ownItem.innerText()}`);
    await ownItem.hover();
    const hover = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: `Thread: ${clean.thread_id}` }).first();
    await hover.waitFor();
    mustInclude('tooltip', await hover.innerText(), [`Session Keeper — ${clean.title}`, 'Branch: main', 'Todos: 1/3 done',
      'Tests: 7/9 passed', 'Last resume verdict: ok']);
    await page.waitForTimeout(400); // the hover fades in
    await shot('07-status-tooltip.png');
    await page.mouse.move(700, 300);
  });

  await check('Show Session Details opens the clean thread\'s timeline', async () => {
    await runCommand('Session Keeper: Show Session Details…');
    await row(clean.title).click();
    const editor = page.locator('.editor-instance .view-lines').filter({ hasText: 'Timeline' }).first();
    await editor.waitFor();
    await page.locator('.tab', { hasText: `${clean.title}.md` }).first().waitFor();
    // Two sessions: the seeded one and the one the resume opened.
    await editor.filter({ hasText: 'resumed from' }).waitFor();
    const text = (await editor.innerText()).replace(/\s+/g, ' ');
    mustInclude('details', text, [`# ${clean.title}`, clean.thread_id, 'Todos | 1/3', 'Tests | 7/9', 'Timeline',
      'session started', 'todos 1/3 done', 'tests 7/9', 'resumed from']);
    await shot('08-details-timeline.png');
  });
}
