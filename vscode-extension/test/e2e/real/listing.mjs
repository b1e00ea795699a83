// The real scenario, first part: the store as seeded, the status bar, the Sessions view, the picker,
// the all-workspaces toggle, the keybinding and the palette.

export async function listingChecks(t, h) {
  const { check, page, quickInput, rows, row, ownItem, shot } = t;
  const { clean, drifted, elsewhere, waitStatus, mustInclude, flat, view, openView, waitViewThreads } = h;
  await check('the status bar says what it is: "Agent sessions (4)" (2 of Session Keeper, 1 Codex, 1 Claude Code), nothing current yet', async () => {
    await ownItem.waitFor();
    const { label: l } = await waitStatus(/^history Agent sessions \(4\)/, '"Agent sessions (4)"');
    mustInclude('status tooltip', l, ['4 agent sessions in this workspace', 'none is current']);
    await shot('01-status-bar-agent-sessions.png');
  });

  await check('the Sessions view lists both threads newest first with agent icon, branch, age, todos, tests and drift reason', async () => {
    await openView();
    const list = await waitViewThreads((l) => l.length === 4, 'four threads');
    if (!list[0].startsWith(drifted.title) || !list[1].startsWith(clean.title)) throw new Error(`order: ${JSON.stringify(list)}`);
    mustInclude('drifted row', list[0], ['⚠ branch fix/payment → main', 'todos 0/2']);
    mustInclude('clean row', list[1], ['main', 'todos 1/3', 'tests 7/9']);
    const icons = await view.locator('.monaco-list-row[aria-level="1"] .custom-view-tree-node-item-icon').evaluateAll(
      (els) => els.map((e) => getComputedStyle(e).backgroundImage));
    if (icons.length !== 4 || !icons.slice(0, 2).every((i) => i.includes('agent-native.svg'))) throw new Error(`row icons: ${JSON.stringify(icons)}`);
    await shot('02-sessions-view.png');
  });

  await check('the picker (from the status item) names the agent, says what drifted, and acts from row buttons', async () => {
    await ownItem.click();
    await quickInput.locator('.quick-input-title', { hasText: 'Session Keeper: Agent Sessions' }).waitFor();
    await quickInput.locator('input:not([placeholder="Loading sessions…"])').waitFor();
    const texts = (await rows.allInnerTexts()).map(flat);
    const d = texts.find((x) => x.includes(drifted.title));
    const c = texts.find((x) => x.includes(clean.title));
    if (!d || !c) throw new Error(`rows: ${JSON.stringify(texts)}`);
    mustInclude('drifted picker row', d, ['Session Keeper', 'branch fix/payment → main', 'todos 0/2']);
    mustInclude('clean picker row', c, ['Session Keeper', 'main', 'todos 1/3', 'tests 7/9']);
    await row(clean.title).hover();
    const buttons = await row(clean.title).locator('.action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    for (const b of ['Resume (check the workspace first)', 'Fork: a new thread from here', 'Details', 'Archive (with Undo)']) {
      if (!buttons.includes(b)) throw new Error(`row buttons: ${JSON.stringify(buttons)}`);
    }
    await shot('03-picker.png');
    await page.keyboard.press('Escape');
  });

  await check('the all-workspaces toggle lists the threads of every folder, each naming its folder, and back', async () => {
    await page.locator('.action-label[aria-label^="Show Sessions of All Workspaces"]').first().click();
    const all = await waitViewThreads((x) => x.length === 5, 'five threads');
    if (!all[4].startsWith(elsewhere.title) || !all[4].includes('elsewhere')) throw new Error(`rows: ${JSON.stringify(all)}`);
    if (!all[0].includes('workspace')) throw new Error(`a row of this folder does not name it: ${all[0]}`);
    await shot('02b-all-workspaces.png');
    await page.locator('.action-label[aria-label^="Show Sessions of This Workspace"]').first().click();
    await waitViewThreads((x) => x.length === 4 && !x.some((r) => r.startsWith(elsewhere.title)), "this workspace's four threads");
  });

  await check('the keybinding opens the picker; palette entries appear only when they apply', async () => {
    await page.keyboard.press('Control+Alt+Shift+S');
    await quickInput.locator('.quick-input-title', { hasText: 'Session Keeper: Agent Sessions' }).waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = quickInput.locator('input');
    await input.waitFor();
    await input.fill('>Session Keeper: ');
    await row('Session Keeper: Resume…').waitFor();
    const titles = (await rows.allInnerTexts()).map(flat).join(' | ');
    for (const hidden of ['Why Is the Server Not Running?', 'Install the Server into the Selected Interpreter', 'Open Diff', 'Rewind File…', 'Rewind to Here…', 'Show Sessions of This Workspace']) {
      if (titles.includes(hidden)) throw new Error(`"${hidden}" is offered in the palette while it does not apply: ${titles}`);
    }
    mustInclude('palette', titles, ['Pick Agent Session…', 'Show Sessions of All Workspaces', 'Connect Agents']);
    await page.keyboard.press('Escape');
  });

}
