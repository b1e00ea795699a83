/**
 * The details pages (webviews): one per thread, titled by the thread, refreshed on demand, and
 * the resume report page. A page's buttons come back as messages and run the matching
 * `sessionKeeper.*` command, so the page itself can do nothing the commands could not.
 */

import { errorMessage, type Logger } from './log';
import type { Report, Requester } from './protocol';
import { detailsMessage, renderDetailsHtml } from './ui/details';
import { esc, nonce, page, pageMessage } from './ui/html';
import { renderReportHtml } from './ui/report';
import * as api from './vscodeapi';

export class DetailsPanels {
  private readonly open_ = new Map<string, api.Panel>();
  private readonly cwd = new Map<string, string>();

  constructor(private readonly request: Requester, private readonly log: Logger, private readonly workspace: () => string | undefined) {}

  /** Opens (or reveals and refreshes) the details page of a thread. */
  async open(threadId: string): Promise<void> {
    let panel = this.open_.get(threadId);
    if (panel) {
      panel.reveal();
    } else {
      panel = api.createPanel('sessionKeeper.details', 'Session details');
      this.open_.set(threadId, panel);
      panel.onDispose(() => { this.open_.delete(threadId); this.cwd.delete(threadId); });
      panel.onMessage((raw) => void this.onMessage(threadId, raw));
    }
    await this.render(threadId, panel);
  }

  /** Re-renders a thread's page if it is open. */
  refresh(threadId: string): void {
    const panel = this.open_.get(threadId);
    if (panel) void this.render(threadId, panel);
  }

  private async render(threadId: string, panel: api.Panel): Promise<void> {
    const n = nonce();
    try {
      const ws = this.workspace();
      const [shown, check] = await Promise.all([
        this.request('session/show', { thread_id: threadId }),
        ws ? this.request('session/checkResume', { thread_id: threadId, workspace: ws }).catch(() => undefined) : Promise.resolve(undefined),
      ]);
      const title = shown.thread.title || 'Untitled';
      if (shown.thread.cwd) this.cwd.set(threadId, shown.thread.cwd);
      panel.setTitle(`Session: ${title}`);
      panel.setHtml(page({ title, cspSource: panel.cspSource, nonce: n, body: renderDetailsHtml(shown, check) }));
    } catch (err) {
      this.log.error(`details of ${threadId}: ${errorMessage(err)}`);
      panel.setHtml(page({ title: 'Session details', cspSource: panel.cspSource, nonce: n,
        body: `<h1>Could not load the thread</h1><p class="err">${esc(errorMessage(err))}</p>` }));
    }
  }

  private async onMessage(threadId: string, raw: unknown): Promise<void> {
    const m = pageMessage(raw);
    const msg = m && detailsMessage(m);
    if (!msg) return;
    const root = this.cwd.get(threadId) ?? this.workspace();
    switch (msg.cmd) {
      case 'openFile': if (root) await api.openFile(`${root.replace(/\/+$/, '')}/${msg.path}`); return;
      case 'openDiff': await api.executeCommand('sessionKeeper.openDiff', { thread_id: threadId, seq: msg.seq, path: msg.path }); return;
      case 'rewindFile': await api.executeCommand('sessionKeeper.rewindFile', { thread_id: threadId, seq: msg.seq, path: msg.path }); return;
      case 'rewindTo': await api.executeCommand('sessionKeeper.rewindTo', { thread_id: threadId, seq: msg.seq }); return;
      case 'changes': await api.executeCommand('sessionKeeper.showChanges', threadId); return;
      case 'resume': await api.executeCommand('sessionKeeper.resume', threadId); return;
      case 'fork': await api.executeCommand('sessionKeeper.fork', threadId); return;
      case 'refresh': this.refresh(threadId); return;
    }
  }

  /** Shows a resume report as a page (titled by the thread, never by its id). */
  showReport(report: Report, title: string): Promise<void> {
    const panel = api.createPanel('sessionKeeper.report', `Resume report: ${title}`);
    panel.setHtml(page({ title: `Resume report — ${title}`, cspSource: panel.cspSource, nonce: nonce(), body: renderReportHtml(report, title) }));
    return Promise.resolve();
  }
}
