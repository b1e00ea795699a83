// The real scenario, last part: the walkthrough, rebuild and restart, a bare python3 (one
// notification, the way out), turning an agent off in the settings, and what the log holds.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export async function editorChecks(t, h) {
  const { check, page, quickInput, row, shot, runCommand } = t;
  const { codex, claude, waitStatus, storeThreads, extensionLog, waitLog, mustInclude, flat, view, openView, waitViewThreads, toast, editSettings } = h;
  await check('the getting-started walkthrough has the install, connect-agents and pick-a-session steps', async () => {
    await runCommand('Welcome: Open Walkthrough...');
    await row('Get Started with Session Keeper').waitFor();
    await row('Get Started with Session Keeper').click();
    const walk = page.locator('.gettingStartedContainer');
    await walk.locator('.getting-started-step', { hasText: 'Install the server' }).first().waitFor();
    mustInclude('walkthrough', flat(await walk.innerText()), ['Get Started with Session Keeper', 'Install the server', 'Connect your agents', 'Pick a session']);
    await page.waitForTimeout(300);
    await shot('15-walkthrough.png');
    await runCommand('View: Close All Editors');
  });

  await check('Rebuild Session Index reports the counts; Restart Server brings the server back', async () => {
    await runCommand('Session Keeper: Rebuild Session Index');
    await toast('Session Keeper: indexed 4 threads').waitFor();
    await runCommand('Notifications: Clear All Notifications');
    await runCommand('Session Keeper: Restart Server');
    await waitStatus(/^history Agent sessions \(5\)/, 'the restarted server (nothing current in a new server)');
  });

  await check('with a bare python3 the server does not start, and ONE notification names the cause and the way out', async () => {
    const settingsFile = process.env.E2E_SETTINGS;
    const bare = '/usr/bin/python3';
    try {
      execFileSync(bare, ['-c', 'import sessionkeeper'], { stdio: 'pipe' });
      throw new Error(`${bare} has sessionkeeper installed: the first-run check needs one without it`);
    } catch (err) {
      if (String(err.message).includes('has sessionkeeper')) throw err;
    }
    await editSettings({ 'sessionKeeper.serverCommand': [], 'sessionKeeper.pythonPath': bare });
    const note = toast("lacks the `sessionkeeper` package");
    await note.waitFor();
    const text = flat(await note.innerText());
    mustInclude('first-run notification', text, [`Session Keeper: after the settings change, the server did not start: \`${bare}\` lacks the \`sessionkeeper\` package (No module named 'sessionkeeper')`]);
    const buttons = (await note.locator('.monaco-button').allInnerTexts()).map(flat);
    for (const b of [`Install into ${bare}`, 'Select Interpreter', 'Open Settings']) if (!buttons.includes(b)) throw new Error(`buttons: ${JSON.stringify(buttons)}`);
    await page.waitForTimeout(1500); // anything else that would pop up
    const errors = await page.locator('.notification-toast .codicon-error').count();
    if (errors !== 1) throw new Error(`${errors} error notifications (want exactly one)`);
    await waitStatus(/^debug-disconnect Agent sessions: server not running/, 'the server not running');
    await view.locator('.welcome-view-content', { hasText: 'The Session Keeper server is not running.' }).waitFor();
    await shot('16-first-run-notification.png');
    await note.getByRole('button', { name: 'Select Interpreter', exact: true }).click();
    const input = quickInput.locator('input');
    await input.waitFor();
    await input.fill(process.env.E2E_PYTHON);
    await page.keyboard.press('Enter');
    await waitStatus(/^history Agent sessions \(5\)/, 'the server back with the selected interpreter');
    const after = JSON.parse(readFileSync(settingsFile, 'utf8'));
    if (after['sessionKeeper.pythonPath'] !== process.env.E2E_PYTHON) throw new Error(`pythonPath now ${after['sessionKeeper.pythonPath']}`);
  });

  await check('turning claude off in sessionKeeper.agents restarts the server and leaves only the Codex thread of the agents', async () => {
    const logged = extensionLog().text.length;
    const before = await editSettings({ 'sessionKeeper.agents': ['codex'] });
    if (before['sessionKeeper.codexHome'] !== codex.home) throw new Error(`codexHome is ${before['sessionKeeper.codexHome']}`);
    await waitStatus(/^history Agent sessions \(4\)/, 'one thread fewer');
    await runCommand('View: Close All Editors');
    await openView();
    const list = await waitViewThreads((l) => l.length === 4 && !l.some((r) => r.startsWith(claude.title)), 'no Claude Code thread');
    if (!list.some((r) => r.startsWith(codex.title))) throw new Error(`the Codex thread is gone too: ${JSON.stringify(list)}`);
    await waitLog('Server settings changed: restarting the server', 'the restart after the change', logged);
    await shot('17-claude-off-only-codex.png');
    if (storeThreads('--agent', 'claude').length !== 1) throw new Error("the Claude Code session is gone from the store: turning it off only hides it");
  });

  await check('the log holds every resume, decision, switch back, archive and error at info level', async () => {
    const { text: log, files } = extensionLog();
    const expect = [
      [/\[info\] Resume “Clean thread” \(.+\): check says ok/, 'a resume check'],
      [/\[info\] Resume “Drifted thread”: decision fork/, 'the Enter decision'],
      [/\[info\] Resume “Drifted thread”: decision switch_back/, 'the switch-back decision'],
      [/\[info\] Switch back for “Drifted thread”: ran `git checkout fix\/payment`/, 'the switch back'],
      [/\[info\] Archived “Drifted thread \(fork\)”/, 'the archive'],
      [/\[info\] Undo: unarchived “Drifted thread \(fork\)”/, 'the undo'],
      [/\[info\] Rewound the files of the session to event \d+/, 'the rewind'],
      [/\[info\] First run: Session Keeper: after the settings change, the server did not start: `\/usr\/bin\/python3` lacks/, 'the first-run cause'],
      [/\[error\] Server not started: `\/usr\/bin\/python3` lacks the `sessionkeeper` package/, 'the start error'],
      [/\[info\] Resume “Codex e2e: read the README” \(.+\): check says ok/, "the Codex thread's resume check"],
      [/\[info\] Resume “Codex e2e: read the README”: running the agent's own resume in a terminal in .+: codex resume /, "the Codex thread's command"],
      [/\[info\] Resume “Claude e2e: read the README”: decision cancel/, "the Claude Code thread's cancel"],
    ];
    const missing = expect.filter(([re]) => !re.test(log)).map(([, what]) => what);
    if (missing.length) throw new Error(`the log lacks: ${missing.join(', ')} (${files} log file(s))`);
  });
}
