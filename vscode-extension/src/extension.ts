/** Entry point: wires the pieces together on activation and returns the extension API. */

import { createApi, type SessionKeeperApi } from './api';
import { Commands } from './commands';
import { errorMessage, logChannel } from './log';
import type { Requester } from './protocol';
import { activeInterpreter } from './python';
import { SessionServer } from './server';
import { needsRestart, readSettings, resolveLaunch, SECTION } from './settings';
import { StatusBarController } from './ui/statusBar';
import * as api from './vscodeapi';

let server: SessionServer | undefined;

export function activate(context: api.ExtensionContext): SessionKeeperApi {
  const log = logChannel();
  const settings = () => readSettings(api.getConfiguration(SECTION));
  const status = new StatusBarController(
    api.createStatusBarItem('sessionKeeper.status', 100),
    'sessionKeeper.pickSession',
    api.warningBackground(),
  );

  const srv = new SessionServer(log, {
    launch: async () =>
      resolveLaunch(settings(), {
        activeInterpreter: settings().pythonPath || settings().serverCommand.length ? undefined : await activeInterpreter(log),
        workspaceFolder: api.firstWorkspaceFolder(),
        userHome: api.userHome(),
      }),
    // The server resumes the latest thread itself when autoResume is set, and asks with
    // window/showMessageRequest on drift (PROTOCOL.md, initializationOptions).
    initializationOptions: () => {
      const s = settings();
      const ws = api.firstWorkspaceFolder();
      return { durability: s.durability, redaction: s.redaction, autoResume: s.autoResume, askOnDrift: true, ...(ws ? { workspace: ws } : {}) };
    },
    workspace: api.firstWorkspaceFolder,
    onStatus: (s) => status.setStatus(s),
    onPhase: (p) => status.setPhase(p),
  });
  server = srv;
  const request: Requester = (method, params) => srv.request(method, params);

  const commands = new Commands({
    request,
    log,
    restartServer: () => srv.restart(),
    refreshStatus: () => srv.refreshStatus(),
  });

  context.subscriptions.push(
    log,
    srv,
    ...commands.register(),
    api.onDidChangeConfiguration((affects) => {
      if (needsRestart(affects)) srv.restartDebounced();
    }),
    api.onDidChangeWorkspaceFolders(() => srv.restartDebounced()),
  );

  srv
    .start()
    .catch(async (err: unknown) => {
      log.error(`Session Keeper did not start: ${errorMessage(err)}`);
      const pick = await api.showMessage('error', `Session Keeper: the server did not start (${errorMessage(err)}).`, ['Open Log', 'Restart Server']);
      if (pick === 'Open Log') log.show();
      if (pick === 'Restart Server') await srv.restart().catch(() => undefined);
    });

  return createApi({ request, workspace: api.firstWorkspaceFolder, durability: () => settings().durability });
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
