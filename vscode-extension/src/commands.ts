/**
 * Glue: registers the `sessionKeeper.<verb>` commands and connects the pure flows (picker,
 * resume, details) to the editor through vscodeapi.ts and to the server through SessionServer.
 */

import { errorMessage, type Logger } from './log';
import type { ListParams, Report, Requester, ThreadSummary } from './protocol';
import { resumeFlow, type ResumeUi } from './resume';
import { renderDetails, detailsPath, reportPath, SCHEME, threadIdFromPath } from './ui/details';
import { renderReportMarkdown } from './ui/drift';
import { actionItems, pickThread, type PickerItem, type ThreadAction } from './ui/picker';
import * as api from './vscodeapi';

export interface CommandDeps {
  request: Requester;
  log: Logger & { show(preserveFocus?: boolean): void };
  restartServer(): Promise<void>;
  refreshStatus(): Promise<void>;
}

/** A thread passed as a command argument: a ThreadSummary (from the picker) or a thread id. */
type ThreadArg = ThreadSummary | string | undefined;

/** Accepts a thread id or a ThreadSummary; anything else (e.g. a Uri from a menu) means "ask". */
function threadArg(a: unknown): ThreadArg {
  if (typeof a === 'string' && a) return a;
  if (a && typeof a === 'object' && typeof (a as { thread_id?: unknown }).thread_id === 'string') return a as ThreadSummary;
  return undefined;
}

export class Commands {
  private readonly reports = new Map<string, string>();
  private readonly docs: ReturnType<typeof api.registerDocumentProvider>;

  constructor(private readonly deps: CommandDeps) {
    this.docs = api.registerDocumentProvider(SCHEME, (path) => this.provide(path));
  }

  /** Registers every command; returns the disposables. */
  register(): api.Disposable[] {
    const cmd = (verb: string, fn: (arg?: unknown) => Promise<unknown>): api.Disposable =>
      api.registerCommand(`sessionKeeper.${verb}`, (arg?: unknown) => this.guard(verb, () => fn(arg)));
    return [
      this.docs.disposable,
      cmd('pickSession', () => this.pickSession()),
      cmd('resume', (a) => this.resume(threadArg(a))),
      cmd('fork', (a) => this.fork(threadArg(a))),
      cmd('archive', (a) => this.setArchived(threadArg(a), true)),
      cmd('unarchive', (a) => this.setArchived(threadArg(a), false)),
      cmd('showDetails', (a) => this.showDetails(threadArg(a))),
      cmd('reindex', () => this.reindex()),
      cmd('restartServer', () => this.deps.restartServer()),
      cmd('openLog', async () => this.deps.log.show()),
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
  private pick(title: string, filter: Omit<ListParams, 'cursor'> = {}): Promise<ThreadSummary | undefined> {
    const workspace = this.workspace();
    return pickThread(
      {
        createQuickPick: () => api.createQuickPick<PickerItem>(),
        list: (cursor) => this.deps.request('session/list', { workspace, limit: 50, ...filter, ...(cursor ? { cursor } : {}) }),
        onError: (err) => this.deps.log.error(`session/list: ${errorMessage(err)}`),
      },
      title,
    );
  }

  private async thread(arg: ThreadArg, title: string, filter?: Omit<ListParams, 'cursor'>): Promise<ThreadSummary | string | undefined> {
    return arg ?? (await this.pick(title, filter));
  }

  async pickSession(): Promise<void> {
    const t = await this.pick('Session Keeper: Sessions');
    if (!t) return;
    const action = await api.showQuickPick(actionItems(t), { title: t.title || t.thread_id, placeHolder: 'What do you want to do with this session?' });
    if (action?.action) await this.run(action.action, t);
  }

  private run(action: ThreadAction, t: ThreadSummary): Promise<unknown> {
    switch (action) {
      case 'resume': return this.resume(t);
      case 'fork': return this.fork(t);
      case 'archive': return this.setArchived(t, true);
      case 'unarchive': return this.setArchived(t, false);
      case 'details': return this.showDetails(t);
    }
  }

  async resume(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Resume which session?');
    if (!t) return;
    const [id, title] = typeof t === 'string' ? [t, undefined] : [t.thread_id, t.title ?? undefined];
    await resumeFlow({ request: this.deps.request, ui: this.resumeUi(), workspace: this.workspace() }, id, title);
    await this.deps.refreshStatus();
  }

  async fork(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Fork which session?');
    if (!t) return;
    const id = typeof t === 'string' ? t : t.thread_id;
    const r = await this.deps.request('session/fork', { thread_id: id, workspace: this.workspace() });
    await api.showMessage('info', `Session Keeper: forked into new thread ${r.thread_id}.`);
    await this.deps.refreshStatus();
  }

  async setArchived(arg: ThreadArg, archived: boolean): Promise<void> {
    const verb = archived ? 'Archive' : 'Unarchive';
    const t = await this.thread(arg, `Session Keeper: ${verb} which session?`, archived ? {} : { all: true });
    if (!t) return;
    const id = typeof t === 'string' ? t : t.thread_id;
    const r = await this.deps.request(archived ? 'session/archive' : 'session/unarchive', { thread_id: id });
    await api.showMessage('info', `Session Keeper: ${r.archived ? 'archived' : 'unarchived'} ${typeof t === 'string' ? t : `“${t.title}”`}.`);
  }

  async showDetails(arg: ThreadArg): Promise<void> {
    const t = await this.thread(arg, 'Session Keeper: Details of which session?');
    if (!t) return;
    const path = typeof t === 'string' ? detailsPath(t) : detailsPath(t.thread_id, t.title ?? undefined);
    this.docs.refresh(path);
    await api.openVirtualDocument(SCHEME, path);
  }

  async reindex(): Promise<void> {
    const r = await api.withProgress('Session Keeper: rebuilding the session index', () => this.deps.request('session/reindex', {}));
    const damaged = r.damaged ? `, ${r.damaged} damaged` : '';
    await api.showMessage(r.damaged ? 'warning' : 'info', `Session Keeper: indexed ${r.threads} threads and ${r.sessions} sessions${damaged}.`);
  }

  /** Content of the `sessionkeeper:` documents: thread details (fetched) or a stored report. */
  private async provide(path: string): Promise<string> {
    const stored = this.reports.get(path);
    if (stored !== undefined) return stored;
    const id = threadIdFromPath(path);
    if (!id) return `Unknown Session Keeper document: ${path}\n`;
    try {
      return renderDetails(await this.deps.request('session/show', { thread_id: id }));
    } catch (err) {
      return `# Could not load thread ${id}\n\n${errorMessage(err)}\n`;
    }
  }

  private resumeUi(): ResumeUi {
    return {
      modal: (severity, message, detail, labels) => Promise.resolve(api.showModal(severity, message, detail, labels)),
      notify: (severity, message, labels) => Promise.resolve(api.showMessage(severity, message, labels)),
      showReport: async (report: Report, title: string) => {
        const path = reportPath(report.thread_id);
        this.reports.set(path, renderReportMarkdown(report, title));
        this.docs.refresh(path);
        await api.openVirtualDocument(SCHEME, path);
      },
      exportThread: async (threadId: string) => {
        const show = await this.deps.request('session/show', { thread_id: threadId });
        await api.openUntitledJson(JSON.stringify(show, null, 2));
      },
      openFile: (path: string) => api.openFile(path),
      copy: async (text: string) => {
        await api.writeClipboard(text);
      },
    };
  }
}
