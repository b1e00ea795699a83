// The real scenario's helpers: the seed, the status item, the store through the real CLI, the
// extension's log, the Sessions view, the picker, dialogs and toasts, the settings file.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Everything the checks share, made from the runner's `t` (page, check, ...). */
export function helpers(t) {
  const { page, rows, ownItem, runCommand, STORE, WS, TIMEOUT } = t;
  const seedFile = process.env.E2E_SEED;
  const seed = seedFile && existsSync(seedFile) ? JSON.parse(readFileSync(seedFile, 'utf8')) : undefined;
  const { clean, drifted, elsewhere, codex, claude } = seed ?? {};

  // The item's aria-label: its text with codicons spelled out, then ", " and the tooltip.
  const label = async () => ((await ownItem.getAttribute('aria-label')) ?? '').replace(/\s+/g, ' ');
  /** Waits until the status item's aria-label (codicons spelled out) matches `re`; returns it and how long it took. */
  async function waitStatus(re, what, timeout = TIMEOUT) {
    const t0 = Date.now();
    for (;;) {
      const l = await label();
      if (re.test(l)) return { label: l, ms: Date.now() - t0 };
      if (Date.now() - t0 > timeout) throw new Error(`status bar never showed ${what}; it shows "${l}"`);
      await page.waitForTimeout(50);
    }
  }
  const git = (...args) => execFileSync('git', args, { cwd: WS, encoding: 'utf8' }).trim();
  /**
   * This workspace's threads as the real CLI sees them in the store (newest first): Session
   * Keeper's own unless `extra` names an `--agent`. It reads the agent homes the server reads (a
   * CLI with other homes would drop their sessions from the shared index).
   */
  function storeThreads(...extra) {
    const py = process.env.E2E_PYTHON;
    if (!py) throw new Error('E2E_PYTHON is not set');
    const homes = seed?.codex ? ['--codex-home', seed.codex.home, '--claude-home', seed.claude.home] : [];
    const agent = extra.includes('--agent') ? [] : ['--agent', 'native'];
    const out = execFileSync(py, ['-m', 'sessionkeeper', '--store', STORE, ...homes, 'list', '--workspace', WS, '--json', ...agent, ...extra], {
      env: { ...process.env, SESSIONKEEPER_HOME: STORE }, encoding: 'utf8',
    });
    return JSON.parse(out);
  }
  /** Everything the extension wrote to its log (Session Keeper: Open Log) so far. */
  function extensionLog() {
    const root = process.env.E2E_USER_DATA;
    if (!root) throw new Error('E2E_USER_DATA is not set');
    const found = [];
    const walk = (dir) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (name.endsWith('Session Keeper.log')) found.push(p);
      }
    };
    walk(join(root, 'logs'));
    return { text: found.map((f) => readFileSync(f, 'utf8')).join('\n'), files: found.length };
  }
  /** Waits until the extension's log holds `text` (after its first `from` characters). */
  async function waitLog(text, what, from = 0) {
    const deadline = Date.now() + TIMEOUT;
    while (!extensionLog().text.slice(from).includes(text)) {
      if (Date.now() > deadline) throw new Error(`the log never said ${what}: "${text}"`);
      await page.waitForTimeout(200);
    }
  }
  /** What the stub `codex` / `claude` on code-server's PATH were run with: [cwd, command line]. */
  const agentCalls = () => readFileSync(seed.agent_calls, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t'));
  const mustInclude = (what, text, parts) => {
    for (const p of parts) if (!text.includes(p)) throw new Error(`${what} lacks "${p}": ${text}`);
  };
  const flat = (s) => s.replace(/\s+/g, ' ').trim();

  // ---- the Sessions view -----------------------------------------------------------------------
  const view = page.locator('[id="workbench.view.extension.sessionKeeper"]');
  const treeRows = view.locator('.monaco-list-row');
  const treeRow = (text) => treeRows.filter({ hasText: text }).first();
  // Click an inline action of a row. The actions show only while the row is hovered, and a row
  // re-rendered under a still mouse (the view refreshed) loses its hover: hover again until the
  // action can be clicked.
  async function clickRowAction(rowOf, label) {
    const action = rowOf().locator(`.action-label[aria-label^="${label}"]`);
    for (let attempt = 1; ; attempt++) {
      await page.mouse.move(0, 0);
      await rowOf().hover();
      try {
        await action.click({ timeout: 3000 });
        return;
      } catch (err) {
        if (attempt >= 10) throw err;
      }
    }
  }
  async function openView() {
    await runCommand('View: Show Agent Sessions');
    await view.locator('.monaco-list').first().waitFor();
    // Room for the descriptions: drag the sidebar's edge 320 px to the right.
    const box = await page.locator('[id="workbench.parts.sidebar"]').boundingBox();
    if (box) {
      await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width + 320, box.y + box.height / 2, { steps: 8 });
      await page.mouse.up();
    }
  }
  /** The thread rows of the view (top level), as texts, top to bottom. */
  async function viewThreads() {
    const texts = await treeRows.evaluateAll((els) => els.filter((e) => e.getAttribute('aria-level') === '1').map((e) => e.innerText));
    return texts.map(flat);
  }
  async function waitViewThreads(pred, what) {
    const deadline = Date.now() + TIMEOUT;
    for (;;) {
      const list = await viewThreads();
      if (pred(list)) return list;
      if (Date.now() > deadline) throw new Error(`the view never showed ${what}; it shows ${JSON.stringify(list)}`);
      await page.waitForTimeout(100);
    }
  }
  const dialog = page.locator('.monaco-dialog-box');
  /** The picker row whose label is exactly `title` (not a fork "title (fork)"). */
  const pickRow = (title) => rows.filter({ has: page.locator('.label-name', { hasText: new RegExp(`(^|\\s)${title.replace(/[()]/g, '\\$&')}$`) }) }).first();
  const toast = (text) => page.locator('.notification-toast', { hasText: text }).first();
  /**
   * Rewrites the user settings through the editor (a write behind its back is not reliably seen
   * by code-server) as the file's settings with `patch` applied; returns what was there before.
   */
  async function editSettings(patch) {
    const settingsFile = process.env.E2E_SETTINGS;
    if (!settingsFile) throw new Error('E2E_SETTINGS is not set');
    const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
    await runCommand('View: Close All Editors');
    await runCommand('Preferences: Open User Settings (JSON)');
    await page.locator('.editor-group-container.active .tab.active', { hasText: 'settings.json' }).waitFor();
    const editor = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
    await editor.waitFor();
    // Below the text, not on it: a one-line file scrolled sideways leaves no clickable line box.
    await editor.click({ position: { x: 120, y: 160 } });
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    // One line, inserted like a paste: no auto-indent or auto-closed brackets.
    await page.keyboard.insertText(JSON.stringify({ ...settings, ...patch }));
    await page.keyboard.press('Control+S');
    return settings;
  }

  // ---- the agents' threads (real CLIs' sessions, homes given by the settings) --------------------
  const agentRow = (a) => treeRow(a.title);
  /** The icon (CSS background) of the top-level row whose text starts with `title`. */
  async function rowIcon(title) {
    return view.locator('.monaco-list-row[aria-level="1"]').evaluateAll((els, t) => els
      .filter((e) => e.innerText.replace(/\s+/g, ' ').trim().startsWith(t))
      .map((e) => getComputedStyle(e.querySelector('.custom-view-tree-node-item-icon')).backgroundImage).join(' | '), title);
  }
  const terminalTab = (name) => page.locator('[id="workbench.parts.panel"] .terminal-tabs-entry', { hasText: name });

  /** The details page's content (its webview's inner frame). */
  const details = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  return {
    seed, seedFile, clean, drifted, elsewhere, codex, claude,
    label, waitStatus, git, storeThreads, extensionLog, waitLog, agentCalls, mustInclude, flat,
    view, treeRows, treeRow, clickRowAction, openView, viewThreads, waitViewThreads,
    dialog, pickRow, toast, editSettings, agentRow, rowIcon, terminalTab, details,
  };
}
