// The real scenario: Codex's and Claude Code's threads (the real CLIs' sessions, read through the
// sessionKeeper.codexHome / claudeHome settings): icons, picker, the agents' own resume, the drift question.

import { statSync } from 'node:fs';

export async function agentChecks(t, h) {
  const { check, page, quickInput, rows, row, shot, runCommand, WS, TIMEOUT } = t;
  const { codex, claude, waitStatus, extensionLog, waitLog, agentCalls, mustInclude, flat, clickRowAction, waitViewThreads, dialog, toast, agentRow, rowIcon, terminalTab } = h;
  await check('the Sessions view shows the Codex thread (ok, on main) and the Claude Code thread (⚠ branch fix/payment → main), each with its agent icon', async () => {
    const list = await waitViewThreads((l) => l.some((r) => r.startsWith(codex.title)) && l.some((r) => r.startsWith(claude.title)), 'both agent threads');
    if (!list[2].startsWith(claude.title) || !list[3].startsWith(codex.title)) throw new Error(`order (newest first): ${JSON.stringify(list)}`);
    mustInclude('Claude Code row', list[2], ['⚠ branch fix/payment → main']);
    mustInclude('Codex row', list[3], ['main']);
    if (list[3].includes('⚠')) throw new Error(`the Codex row shows drift: ${list[3]}`);
    const icons = { codex: await rowIcon(codex.title), claude: await rowIcon(claude.title) };
    if (!icons.codex.includes('agent-codex.svg') || !icons.claude.includes('agent-claude.svg')) throw new Error(`agent icons: ${JSON.stringify(icons)}`);
    await shot('02c-agent-threads-view.png');
  });

  await check('the picker names each agent and its model: "Codex · gpt-5", "Claude Code · <model>" with what drifted', async () => {
    await runCommand('Session Keeper: Pick Agent Session…');
    await quickInput.locator('.quick-input-title', { hasText: 'Session Keeper: Agent Sessions' }).waitFor();
    await quickInput.locator('input:not([placeholder="Loading sessions…"])').waitFor();
    await row(codex.title).waitFor();
    const texts = (await rows.allInnerTexts()).map(flat);
    const cx = texts.find((x) => x.includes(codex.title));
    const cl = texts.find((x) => x.includes(claude.title));
    if (!cx || !cl) throw new Error(`rows: ${JSON.stringify(texts)}`);
    mustInclude('Codex picker row', cx, [`Codex · ${codex.model}`, 'main', '1 session']);
    mustInclude('Claude Code picker row', cl, [`Claude Code · ${claude.model}`, 'branch fix/payment → main']);
    await shot('03b-picker-agent-threads.png');
    await page.keyboard.press('Escape');
  });

  await check('Resume on the ok Codex thread opens a terminal named for it that runs `codex resume <id>` in the workspace; nothing becomes current', async () => {
    const name = `${codex.title} — resume`;
    const command = `codex resume ${codex.thread_id}`;
    await clickRowAction(() => agentRow(codex), 'Resume');
    await toast(`Resumed “${codex.title}”`).waitFor();
    if (await dialog.count()) throw new Error('a dialog was shown for an ok agent thread');
    await terminalTab(name).first().waitFor();
    await waitLog(`Resume “${codex.title}”: running the agent's own resume in a terminal in ${WS}: ${command}`, 'the command it runs');
    const deadline = Date.now() + TIMEOUT;
    while (!agentCalls().some(([cwd, line]) => cwd === WS && line === command)) {
      if (Date.now() > deadline) throw new Error(`the terminal never ran "${command}" in ${WS}: ${JSON.stringify(agentCalls())}`);
      await page.waitForTimeout(100);
    }
    await shot('04a-codex-resume-terminal.png');
    await waitStatus(/^history Agent sessions \(4\)/, 'still nothing current (an agent thread never becomes current)');
    if (agentCalls().length !== 1) throw new Error(`agent commands run: ${JSON.stringify(agentCalls())}`);
    await runCommand('Terminal: Kill All Terminals');
    await runCommand('Notifications: Clear All Notifications');
  });

  await check('Resume on the drifted Claude Code thread asks the drift question first; Cancel runs nothing', async () => {
    const before = statSync(claude.transcript);
    await clickRowAction(() => agentRow(claude), 'Resume');
    await dialog.waitFor();
    const text = flat(await dialog.innerText());
    mustInclude('drift dialog', text, [`“${claude.title}” was recorded in a different environment`, 'Nothing continues until you choose', 'Branch: fix/payment → main', 'Cancel — changes nothing']);
    await page.waitForTimeout(300);
    await shot('04b-claude-drift-dialog.png');
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await waitLog(`Resume “${claude.title}”: decision cancel`, 'the cancel');
    await page.waitForTimeout(1500); // a terminal or a command that would come late
    if (await terminalTab(claude.title).count()) throw new Error('a terminal was opened for the cancelled resume');
    if (agentCalls().some(([, line]) => line.startsWith('claude'))) throw new Error(`claude was run: ${JSON.stringify(agentCalls())}`);
    if (extensionLog().text.includes(`Resume “${claude.title}”: running`)) throw new Error('the log says the Claude Code command ran');
    const after = statSync(claude.transcript);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw new Error("Claude Code's own log changed");
  });

  await check('the details page of an agent thread says where its baseline came from: exact (our hook, Codex) or reconstructed (the log, Claude Code)', async () => {
    const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const cases = [[codex, 'Codex', "exact — recorded by Session Keeper's hook", '04c-codex-details-baseline-hook.png'],
      [claude, 'Claude Code', "reconstructed from Claude Code's own log", '04d-claude-details-baseline-log.png']];
    for (const [a, agentName, says, png] of cases) {
      await clickRowAction(() => agentRow(a), 'Show Session Details');
      await page.locator('.tab', { hasText: `Session: ${a.title}` }).first().waitFor();
      await frame.locator('h1', { hasText: a.title }).waitFor();
      const body = flat(await frame.locator('body').innerText());
      mustInclude(`${agentName} details`, body, [agentName, `thread ${a.thread_id}`, `Baseline ${says}`, 'A resume here']);
      await shot(png);
      await runCommand('View: Close All Editors');
    }
  });

}
