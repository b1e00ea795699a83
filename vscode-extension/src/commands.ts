/**
 * Glue: registers the `sessionKeeper.<verb>` commands and connects the pure flows (picker,
 * resume, archive, content, details) to the editor through vscodeapi.ts and to the server.
 * Every command failure is logged and shown once; every resume, decision and archive is logged
 * (the flows do it) at info level.
 */

import { archiveWithUndo, unarchive } from './archive';
import { entryArg, threadArg, type ThreadArg } from './args';
import { BLOB_SCHEME, blobText, openDiff, rewindFlow, showChanges, type ContentDeps } from './content';
import type { DetailsPanels } from './detailsPanel';
import { shellQuote } from './format';
import { errorMessage, type Logger } from './log';
import type { ListParams, Report, Requester } from './protocol';
import { reindexFlow, type ReindexDeps } from './reindex';
import { resumeFlow, type ResumeDeps, type ResumeUi } from './resume';
import type { SessionsModel } from './sessions';
import { pickThread, type PickerItem, type Picked } from './ui/picker';
import * as api from './vscodeapi';

export interface CommandDeps {
  request: Requester;
  log: Logger & { show(preserveFocus?: boolean): void };
  sessions: SessionsModel;
  details: DetailsPanels;
  restartServer(): Promise<void>;
  refreshStatus(): Promise<void>;
  currentThread(): string | undefined;
  showServerProblem(): Promise<void>;
  installServer(): Promise<void>;
  selectInterpreter(): Promise<void>;
  connectAgents(): Promise<void>;
  /** Shows a report in a page. */
  showReport(report: Report, title: string): Promise<void>;
  onProgress: ReindexDeps['onProgress'];
  cancelProgress(token: string): void;
}

export class Commands {
  private readonly blobs: ReturnType<typeof api.registerDocumentProvider>;

  constructor(private readonly deps: CommandDeps) {
    this.blobs = api.registerDocumentProvider(BLOB_SCHEME, (path) => blobText(deps.request, path));
  }

  /** Registers every command; returns the disposables. */
  register(): api.Disposable[] {
    const cmd = (verb: string, fn: (arg?: unknown) => Promise<unknown>): api.Disposable =>
      api.registerCommand(`sessionKeeper.${verb}`, (arg?: unknown) => this.guard(verb, () => fn(arg)));
    const d = this.deps;
    return [
      this.blobs.disposable,
      cmd('pickSession', () => this.pickSession()),
      cmd('resume', (a) => this.resume(threadArg(a))),
      cmd('fork', (a) => this.fork(threadArg(a))),
      cmd('archive', (a) => this.archive(threadArg(a))),
      cmd('unarchive', (a) => this.unarchive(threadArg(a))),
      cmd('showDetails', (a) => this.showDetails(threadArg(a))),
      cmd('showChanges', (a) => this.changes(threadArg(a))),
      cmd('openDiff', (a) => this.openDiff(a)),
      cmd('rewindFile', (a) => this.rewind(a, true)),
      cmd('rewindTo', (a) => this.rewind(a, false)),
      cmd('reindex', () => this.reindex()),
      cmd('refreshSessions', () => d.sessions.refresh()),
      cmd('loadMoreSessions', () => d.sessions.loadMore()),
      cmd('showAllWorkspaces', () => this.setAllWorkspaces(true)),
      cmd('showThisWorkspace', () => this.setAllWorkspaces(false)),
      cmd('restartServer', () => d.restartServer()),
      cmd('showServerProblem', () => d.showServerProblem()),
      cmd('installServer', () => d.installServer()),
      cmd('selectInterpreter', () => d.selectInterpreter()),
      cmd('connectAgents', () => d.connectAgents()),
      cmd('openSettings', async () => api.executeCommand('workbench.action.openSettings', '@ext:sessionkeeper.session-keeper')),
      cmd('openLog', async () => d.log.show()),
    ];
  }

  private async guard(verb: string, fn: () => Promise<unknown>): Promise<unknown> {
    try {
      return await fn();
    } catch (err) {
      this.deps.log.error(`${verb}: ${errorMessage(err)}`);
      const pick = await api.showMessage('error', `Session Keeper: ${verb} failed: ${errorMessage(err)}`, ['Open Log']);
      if (pick === 'Open Log') this.deps.log.show();
      return undefined;
    }
  }

  private workspace(): string {
    const ws = api.firstWorkspaceFolder();
    if (!ws) throw new Error('open a folder first: sessions belong to a workspace folder');
    return ws;
  }

  /** Lazily lists this workspace's threads in a QuickPick (paged). */
  private pick(title: string, filter: Omit<ListParams, 'cursor'> = {}, placeholder?: string): Promise<Picked | undefined> {
    const workspace = this.workspace();
    return pickThread(
      {
        createQuickPick: () => api.createPlainQuickPick<NonNullable<PickerItem['buttons']>[number], PickerItem>(),
        list: (cursor) => this.deps.request('session/list', { workspace, limit: 50, ...filter, ...(cursor ? { cursor } : {}) }),
        onError: (err) => this.deps.log.error(`session/list: ${errorMessage(err)}`),
      },
      title,
      placeholder,
    );
  }

  private async thread(arg: ThreadArg, title: string, filter?: Omit<ListParams, 'cursor'>): Promise<ThreadArg> {
    return arg ?? (await this.pick(title, filter, 'Pick a session'))?.thread;
  }

  async pickSession(): Promise<void> {
    const picked = await this.pick('Session Keeper: Agent Sessions');
    if (!picked) return;
    const t = picked.thread;
    switch (picked.action) {
      case 'accept': case 'resume': await this.resume(t); return;
      case 'fork': await this.fork(t); return;
      case 'archive': await this.archive(t); return;
      case 'unarchive': await this.unarchive(t); return;
      case 'details': await this.showDetails(t); return;
    }
  }

  resumeDeps(): ResumeDeps {
    return { request: this.deps.request, ui: this.resumeUi(), workspace: this.workspace(), log: this.deps.log, currentThread: this.deps.currentThread };
  }

  async resume(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Resume which session?');
    if (!t) return;
    await resumeFlow(this.resumeDeps(), t.thread_id, t.title ?? undefined);
    await this.deps.refreshStatus();
  }

  async fork(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Fork which session?');
    if (!t) return;
    const r = await this.deps.request('session/fork', { thread_id: t.thread_id, workspace: this.workspace() });
    this.deps.log.info(`Forked “${t.title ?? t.thread_id}” (${t.thread_id}) into ${r.thread_id}`);
    void api.showMessage('info', `Session Keeper: forked “${t.title ?? t.thread_id}” into a new thread; it is now the current session.`);
    await this.deps.refreshStatus();
  }

  async archive(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Archive which session?');
    if (!t) return;
    await archiveWithUndo({ request: this.deps.request, notify: (m, l) => Promise.resolve(api.showMessage('info', m, l)), log: this.deps.log }, t);
  }

  async unarchive(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Unarchive which session?', { archived_only: true });
    if (!t) return;
    await unarchive({ request: this.deps.request, notify: (m, l) => Promise.resolve(api.showMessage('info', m, l)), log: this.deps.log }, t);
  }

  async showDetails(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Details of which session?');
    if (t) await this.deps.details.open(t.thread_id);
  }

  private setAllWorkspaces(all: boolean): Promise<unknown> {
    this.deps.sessions.setAllWorkspaces(all);
    return Promise.resolve(api.setContext('sessionKeeper.allWorkspaces', all));
  }

  contentDeps(): ContentDeps {
    return {
      request: this.deps.request, log: this.deps.log,
      ui: {
        blobUri: (p) => api.virtualUri(BLOB_SCHEME, p),
        fileUri: (p) => api.fileUri(p),
        diff: (l, r, title) => api.openDiff(l, r, title),
        changes: (title, files) => api.openChanges(title, files),
        modal: (s, m, d, l) => Promise.resolve(api.showModal(s, m, d, l)),
        notify: (s, m, l) => Promise.resolve(api.showMessage(s, m, l)),
      },
    };
  }

  async openDiff(a: unknown): Promise<void> {
    const at = entryArg(a);
    if (!at?.path) throw new Error('Open diff needs a file change of a timeline');
    await openDiff(this.contentDeps(), { thread_id: at.thread_id, seq: at.seq, path: at.path });
  }

  async rewind(a: unknown, oneFile: boolean): Promise<void> {
    const at = entryArg(a);
    if (!at || (oneFile && !at.path)) throw new Error('Rewind needs an event of a timeline');
    const paths = oneFile && at.path ? [at.path] : undefined;
    await rewindFlow(this.contentDeps(), { thread_id: at.thread_id, to_seq: at.seq, ...(paths ? { paths } : {}) },
      paths ? paths[0] ?? 'the file' : 'the files of the session');
    this.deps.details.refresh(at.thread_id);
  }

  async changes(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Changes of which session?');
    if (!t) return;
    const shown = await this.deps.sessions.show(t.thread_id);
    await showChanges(this.contentDeps(), { thread_id: t.thread_id, title: shown.thread.title ?? t.thread_id, workspace: shown.thread.cwd ?? this.workspace() });
  }

  async reindex(): Promise<void> {
    await reindexFlow({
      request: this.deps.request, onProgress: this.deps.onProgress, cancel: (token) => this.deps.cancelProgress(token),
      withProgress: api.withCancellableProgress, log: this.deps.log,
      notify: (severity, message) => void api.showMessage(severity, message),
    });
  }

  resumeUi(): ResumeUi {
    return {
      modal: (severity, message, detail, labels) => Promise.resolve(api.showModal(severity, message, detail, labels)),
      notify: (severity, message, labels) => Promise.resolve(api.showMessage(severity, message, labels)),
      showReport: (report, title) => this.deps.showReport(report, title),
      showDetails: (id) => this.deps.details.open(id),
      exportThread: async (threadId: string) => {
        const show = await this.deps.request('session/show', { thread_id: threadId });
        await api.openUntitledJson(JSON.stringify(show, null, 2));
      },
      openFile: (path: string) => api.openFile(path),
      openFolder: (path: string) => api.openFolderInNewWindow(path),
      openSourceControl: async () => { await api.executeCommand('workbench.view.scm'); },
      runAgent: (command, title) => {
        api.runInTerminal({ name: `${title} — resume`, cwd: command.cwd, text: command.argv.map(shellQuote).join(' ') });
      },
    };
  }
}
