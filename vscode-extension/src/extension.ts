/** Entry point: wires the pieces together on activation and returns the extension API. */

import { createApi, type SessionKeeperApi } from './api';
import { Commands } from './commands';
import { DetailsPanels } from './detailsPanel';
import { errorMessage, logChannel } from './log';
import type { Requester, Status } from './protocol';
import { activeInterpreter } from './python';
import { SessionServer, StartProblem } from './server';
import { ServerUi } from './serverUi';
import { SessionsModel } from './sessions';
import { agentOptions, needsRestart, readSettings, resolveLaunch, SECTION, sharedOptions } from './settings';
import { decorationOf, SessionsTree, THREAD_SCHEME } from './ui/sessionsTree';
import { StatusBarController } from './ui/statusBar';
import * as api from './vscodeapi';

let server: SessionServer | undefined;

export function activate(context: api.ExtensionContext): SessionKeeperApi {
  const log = logChannel();
  const settings = () => readSettings(api.getConfiguration(SECTION));
  const status = new StatusBarController(api.createStatusBarItem('sessionKeeper.status', 100), api.warningBackground());
  const launch = async () => resolveLaunch(settings(), {
    activeInterpreter: settings().pythonPath || settings().serverCommand.length ? undefined : await activeInterpreter(log),
    workspaceFolder: api.firstWorkspaceFolder(),
    userHome: api.userHome(),
  });

  let current: Status | null = null;
  let sessions: SessionsModel | undefined;
  let refreshTree: () => void = () => undefined;
  const decorations = api.registerDecorations(THREAD_SCHEME, decorationOf);
  const serverUi = new ServerUi({ log, restart: () => srv.restart(), launch, installSpec: () => settings().installSpec });

  const srv = new SessionServer(log, {
    launch,
    // The server resumes the latest thread itself when autoResume is set, and asks with
    // window/showMessageRequest on drift (PROTOCOL.md, initializationOptions).
    initializationOptions: () => {
      const s = settings();
      const ws = api.firstWorkspaceFolder();
      const agents = agentOptions(s, { workspaceFolder: ws, userHome: api.userHome() });
      return { durability: s.durability, redaction: s.redaction, autoResume: s.autoResume, askOnDrift: true, ...agents, ...sharedOptions(s), ...(ws ? { workspace: ws } : {}) };
    },
    workspace: api.firstWorkspaceFolder,
    onStatus: (s) => {
      if (s?.state !== current?.state || s?.thread_id !== current?.thread_id) {
        log.info(s ? `Current session: “${s.title ?? s.thread_id}” (${s.thread_id}), live state ${s.state ?? 'unchecked'}${s.state_reason ? `: ${s.state_reason}` : ''}` : 'No current session');
      }
      current = s;
      status.setStatus(s);
      sessions?.setStatus(s);
    },
    onPhase: (p) => {
      status.setPhase(p, serverUi.current?.message);
      sessions?.setPhase(p);
      void api.setContext('sessionKeeper.serverRunning', p === 'running');
      void api.setContext('sessionKeeper.serverProblem', p === 'failed' && serverUi.current !== undefined);
      void api.setContext('sessionKeeper.serverFailed', p === 'failed');
    },
    onThreadsChanged: (reason) => {
      log.debug(`session/didChangeThreads: ${reason}`);
      sessions?.refreshSoon();
    },
    onProblem: (p) => serverUi.setProblem(p),
  });
  server = srv;
  const request: Requester = (method, params) => srv.request(method, params);

  sessions = new SessionsModel({
    request, log, workspace: api.firstWorkspaceFolder,
    onChange: () => {
      refreshTree();
      decorations.refresh();
      status.setCount(sessions?.count(), sessions?.allWorkspaces);
      void api.setContext('sessionKeeper.noSessions', sessions?.isEmpty() ?? false);
    },
  });
  const model = sessions;
  const tree = api.createTreeView('sessionKeeper.sessions', new SessionsTree({
    threads: () => model.threads(), hasMore: () => model.hasMore(), notice: () => model.notice(),
    show: (id) => model.show(id), allWorkspaces: () => model.allWorkspaces,
  }), (file) => api.mediaUri(context, file));
  let treeTimer: NodeJS.Timeout | undefined; // a burst of changes redraws the view once
  refreshTree = () => {
    if (treeTimer) return;
    treeTimer = setTimeout(() => { treeTimer = undefined; tree.refresh(); }, 50);
  };
  void api.setContext('sessionKeeper.allWorkspaces', false);

  const details = new DetailsPanels(request, log, api.firstWorkspaceFolder);
  const commands = new Commands({
    request, log, sessions: model, details,
    restartServer: () => srv.restart(),
    refreshStatus: () => srv.refreshStatus(),
    currentThread: () => current?.thread_id,
    showServerProblem: () => (serverUi.current ? serverUi.notify(undefined, true) : Promise.resolve(log.show())),
    installServer: () => serverUi.install(),
    selectInterpreter: () => serverUi.selectInterpreter(),
    connectAgents: () => serverUi.connectAgents(),
    showReport: (report, title) => details.showReport(report, title),
    onProgress: (token, handler) => srv.onProgress(token, handler),
    cancelProgress: (token) => srv.cancelProgress(token),
  });

  const startFailed = (after?: string) => async (err: unknown): Promise<void> => {
    if (err instanceof StartProblem) {
      await serverUi.notify(after, after !== undefined);
      return;
    }
    log.error(`Session Keeper did not start: ${errorMessage(err)}`);
    const lead = after ? `${after}, the server did not start` : 'the server did not start';
    const pick = await api.showMessage('error', `Session Keeper: ${lead} (${errorMessage(err)}).`, ['Open Log', 'Restart Server']);
    if (pick === 'Open Log') log.show();
    if (pick === 'Restart Server') await srv.restart().catch(startFailed());
  };

  context.subscriptions.push(
    log, srv, tree.disposable, decorations.disposable,
    ...commands.register(),
    api.onDidChangeConfiguration((affects) => {
      if (!needsRestart(affects)) return;
      log.info('Server settings changed: restarting the server');
      srv.restartDebounced(1000, (err) => void startFailed('after the settings change')(err));
    }),
    api.onDidChangeWorkspaceFolders(() => srv.restartDebounced(1000, (err) => void startFailed('after the workspace folders changed')(err))),
  );

  srv.start().catch(startFailed());

  return createApi({ request, workspace: api.firstWorkspaceFolder, durability: () => settings().durability });
}

export async function deactivate(): Promise<void> {
  await server?.shutdown();
  server = undefined;
}
