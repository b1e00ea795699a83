// The real scenario: archive with Undo, the details page, the diffs of the agent's changes and
// a rewind with Undo (`forkId`: the thread `resumeChecks` forked).

import { existsSync, readFileSync } from 'node:fs';

export async function contentChecks(t, h, forkId) {
  const { check, page, quickInput, rows, row, shot, runCommand, WS } = t;
  const { clean, drifted, storeThreads, mustInclude, flat, treeRow, clickRowAction, waitViewThreads, toast, details } = h;
  await check('archive from the view acts at once and Undo brings the thread back', async () => {
    const title = `${drifted.title} (fork)`;
    await waitViewThreads((x) => x.some((r) => r.startsWith(title)), 'the fork');
    await clickRowAction(() => treeRow(title), 'Archive');
    const note = toast(`Archived “${title}”`);
    await note.waitFor();
    await waitViewThreads((x) => !x.some((r) => r.startsWith(title)), 'the fork gone');
    if (!storeThreads('--all').find((x) => x.thread_id === forkId)?.archived) throw new Error('not archived in the store');
    await page.waitForTimeout(300);
    await shot('10-archived-with-undo.png');
    await note.getByRole('button', { name: 'Undo', exact: true }).click();
    await waitViewThreads((x) => x.some((r) => r.startsWith(title)), 'the fork back');
    if (storeThreads().find((x) => x.thread_id === forkId)?.archived !== false) throw new Error('still archived in the store');
    await runCommand('Notifications: Clear All Notifications');
  });

  await check('Unarchive offers the archived threads alone and brings the one picked back', async () => {
    const title = `${drifted.title} (fork)`;
    await clickRowAction(() => treeRow(title), 'Archive');
    await toast(`Archived “${title}”`).waitFor();
    await waitViewThreads((x) => !x.some((r) => r.startsWith(title)), 'the fork gone');
    await runCommand('Notifications: Clear All Notifications');
    await runCommand('Session Keeper: Unarchive Session…');
    await quickInput.locator('.quick-input-title', { hasText: 'Session Keeper: Unarchive which session?' }).waitFor();
    await quickInput.locator('input:not([placeholder="Loading sessions…"])').waitFor();
    await row(title).waitFor();
    const listed = (await rows.allInnerTexts()).map(flat);
    if (listed.length !== 1 || !listed[0].includes(title)) throw new Error(`the Unarchive picker lists ${JSON.stringify(listed)}`);
    await shot('10b-unarchive-picker.png');
    await row(title).click();
    await toast(`Unarchived “${title}”`).waitFor();
    await waitViewThreads((x) => x.some((r) => r.startsWith(title)), 'the fork back');
    if (storeThreads().find((x) => x.thread_id === forkId)?.archived !== false) throw new Error('still archived in the store');
    await runCommand('Notifications: Clear All Notifications');
  });

  await check('Details opens a rendered page of the thread: summary, resume check, sessions, timeline with clickable paths and diff/rewind actions', async () => {
    await clickRowAction(() => treeRow(clean.title), 'Show Session Details');
    await page.locator('.tab', { hasText: `Session: ${clean.title}` }).first().waitFor();
    const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await frame.locator('h1', { hasText: clean.title }).waitFor();
    const body = flat(await frame.locator('body').innerText());
    mustInclude('details page', body, ['Session Keeper', 'A resume here', 'Sessions (2)', 'Timeline', 'checkout main → fix/payment',
      'payment.py', 'notes.md', 'Open diff', 'Rewind file…', 'Rewind to here…', 'Changes by the agent', 'todos']);
    await frame.locator('a.act', { hasText: 'notes.md' }).first().click();
    await page.locator('.tab', { hasText: 'notes.md' }).first().waitFor();
    await page.locator('.tab', { hasText: `Session: ${clean.title}` }).first().click();
    await frame.locator('h1', { hasText: clean.title }).waitFor();
    await shot('11-details-page.png');
  });

  await check("Changes by the agent opens a multi-file diff of the session's edits", async () => {
    await details.locator('button.act', { hasText: 'Changes by the agent' }).click();
    await page.locator('.tab', { hasText: `Changes by the agent — ${clean.title}` }).first().waitFor();
    await page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'Charges are rounded to cents.' }).first().waitFor();
    await shot('12-changes-by-the-agent.png');
  });

  await check("Open diff on a file change in the timeline shows the agent's change (content from the blob store)", async () => {
    await treeRow('notes.md by agent').click();
    await page.locator('.tab', { hasText: 'notes.md (agent, event' }).first().waitFor();
    const modified = page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'Charges are rounded to cents.' }).first();
    await modified.waitFor();
    const original = flat(await page.locator('.monaco-diff-editor .editor.original .view-lines').first().innerText());
    if (original) throw new Error(`the file did not exist before the agent wrote it, yet the left side shows "${original}"`);
    await shot('13-open-diff.png');
  });

  await check('Rewind to here… previews per file, restores what the session changed (notes.md, created later, is removed), leaves a file changed since alone, and Undo brings it back', async () => {
    const notes = `${WS}/notes.md`;
    const before = readFileSync(notes, 'utf8');
    const payment = readFileSync(`${WS}/payment.py`, 'utf8'); // fix/payment's version since the switch back
    await page.locator('.tab', { hasText: `Session: ${clean.title}` }).first().click();
    await details.locator('h1', { hasText: clean.title }).waitFor();
    await details.locator('tr.entry', { hasText: 'todos 1/3 done' }).locator('button', { hasText: 'Rewind to here…' }).click();
    const preview = page.locator('.monaco-dialog-box', { hasText: 'Rewind the files of the session to event' });
    await preview.waitFor();
    mustInclude('rewind preview', flat(await preview.innerText()), ['notes.md: delete', "payment.py: refused — changed on disk since the session's last version",
      'Rewind Anyway (1 Changed File Too)', 'a rewind can be undone']);
    if (!existsSync(notes)) throw new Error('notes.md is gone before the rewind was confirmed');
    await page.waitForTimeout(300);
    await shot('14-rewind-preview.png');
    await preview.getByRole('button', { name: 'Rewind 1 File', exact: true }).click();
    const done = toast('rewound 1 file to event');
    await done.waitFor();
    if (existsSync(notes)) throw new Error('notes.md is still there after the rewind');
    if (readFileSync(`${WS}/payment.py`, 'utf8') !== payment) throw new Error('the refused payment.py was rewound');
    await done.getByRole('button', { name: 'Undo', exact: true }).click();
    await toast('rewind undone').waitFor();
    if (!existsSync(notes) || readFileSync(notes, 'utf8') !== before) throw new Error('Undo did not bring notes.md back as it was');
    await runCommand('Notifications: Clear All Notifications');
  });

}
