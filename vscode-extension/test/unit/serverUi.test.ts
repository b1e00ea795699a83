import { vscode } from './fakeLanguageClient'; // first: it answers require('vscode')
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerUi } from '../../src/serverUi';
import { resolveLaunch, readSettings } from '../../src/settings';
import { logger } from './fixtures';

/** Terminals opened through vscodeapi.runInTerminal: their cwd and the line typed into them. */
function terminals(): { cwd: string; text: string }[] {
  const opened: { cwd: string; text: string }[] = [];
  vscode.window.createTerminal = (o: { cwd: string }) => {
    const t = { cwd: o.cwd, text: '' };
    opened.push(t);
    return { show: () => undefined, sendText: (text: string) => { t.text = text; } };
  };
  vscode.window.onDidCloseTerminal = () => ({ dispose: () => undefined });
  vscode.workspace.workspaceFolders = [{ uri: { fsPath: '/ws' } }];
  return opened;
}

function ui(settings: Record<string, unknown>): ServerUi {
  const launch = resolveLaunch(readSettings({ get: <T>(k: string) => settings[k] as T | undefined }), { userHome: '/home/u' });
  return new ServerUi({ log: { ...logger(), show: () => undefined }, restart: async () => undefined, launch: async () => launch, installSpec: () => 'sessionkeeper' });
}

test('Connect Agents installs hooks that record into the store the server reads (sessionKeeper.storePath)', async () => {
  const opened = terminals();
  await ui({ pythonPath: '/venv/bin/python', storePath: '~/sk store' }).connectAgents();
  assert.equal(opened[0]?.text, "/venv/bin/python -m sessionkeeper hooks install --store '/home/u/sk store'");
  await ui({ pythonPath: '/venv/bin/python' }).connectAgents();
  assert.equal(opened[1]?.text, '/venv/bin/python -m sessionkeeper hooks install', 'no store set: the default store, as the server uses');
});
