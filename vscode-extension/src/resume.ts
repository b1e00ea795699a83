/**
 * The Resume flow: dry-run check, then resume / ask about drift / explain a block, then show what
 * came back. Pure orchestration over injected dialogs and a `Requester`, so it is unit-tested.
 */

import type { Report, Requester, ResumeResult } from './protocol';
import { renderBlockedDialog, renderDriftDialog, renderOutcome, switchBackCommand, type Dialog } from './ui/drift';

export interface ResumeUi {
  /** A modal dialog; resolves to the chosen label, or undefined for Cancel / Escape. */
  modal(severity: 'warning' | 'error', message: string, detail: string, labels: string[]): Promise<string | undefined>;
  /** A non-modal notification with buttons. */
  notify(severity: 'info' | 'warning' | 'error', message: string, labels: string[]): Promise<string | undefined>;
  showReport(report: Report, title: string): Promise<void>;
  /** Client-side export (the thread as JSON) when the server gave no export path. */
  exportThread(threadId: string): Promise<void>;
  /** Opens a file the server wrote (the export). */
  openFile(path: string): Promise<void>;
  copy(text: string): Promise<void>;
}

export interface ResumeDeps {
  request: Requester;
  ui: ResumeUi;
  workspace: string;
}

export type ResumeEnd =
  | { kind: 'resumed'; result: ResumeResult }
  | { kind: 'forked'; thread_id: string; session_id: string | null }
  | { kind: 'switch_back'; command: string | undefined }
  | { kind: 'exported'; path: string | undefined }
  | { kind: 'cancelled' };

async function ask<T extends string>(ui: ResumeUi, severity: 'warning' | 'error', d: Dialog<T>): Promise<T | undefined> {
  const label = await ui.modal(severity, d.message, d.detail, d.choices.map((c) => c.label));
  return d.choices.find((c) => c.label === label)?.value;
}

/** Shows what a resume brought back; the "Show Report" button opens the full report. */
export async function showOutcome(ui: ResumeUi, report: Report, title: string, verb?: string): Promise<void> {
  const o = renderOutcome(report, title, verb);
  const text = o.attention.length ? `${o.message} ${o.attention.join(' ')}` : o.message;
  const pick = await ui.notify(o.severity, text, ['Show Report']);
  if (pick === 'Show Report') await ui.showReport(report, title);
}

/**
 * Resumes `threadId` (or the workspace's latest thread when undefined) in `deps.workspace`.
 * Nothing continues on drift or block until the user decides.
 */
export async function resumeFlow(deps: ResumeDeps, threadId: string | undefined, title?: string): Promise<ResumeEnd> {
  const { request, ui, workspace } = deps;
  const report = await request('session/checkResume', threadId ? { thread_id: threadId, workspace } : { latest: true, workspace });
  const id = report.thread_id || threadId;
  if (!id) {
    await ui.notify('info', 'Session Keeper: no session to resume in this workspace.', []);
    return { kind: 'cancelled' };
  }
  const name = title ?? report.title ?? id;

  if (report.verdict === 'ok') {
    const result = await request('session/resume', { thread_id: id, workspace, decision: 'continue' });
    await showOutcome(ui, result.report, name);
    return { kind: 'resumed', result };
  }

  if (report.verdict === 'drift') {
    const choice = (await ask(ui, 'warning', renderDriftDialog(report, name))) ?? 'cancel';
    if (choice === 'cancel') {
      await request('session/resume', { thread_id: id, workspace, decision: 'cancel' }).catch(() => undefined);
      return { kind: 'cancelled' };
    }
    if (choice === 'switch_back') {
      const res = await request('session/resume', { thread_id: id, workspace, decision: 'switch_back' }).catch(() => undefined);
      const cmd = res?.report.switch_back ?? switchBackCommand(report);
      // The real server already shows its git command (window/showMessage); do not repeat it.
      if (res?.report.switch_back) return { kind: 'switch_back', command: cmd ?? undefined };
      const msg = cmd
        ? `To switch back, run in a terminal: ${cmd} — then resume again. (Session Keeper does not run it.)`
        : 'Switch back to the recorded environment, then resume again.';
      const pick = await ui.notify('info', msg, cmd ? ['Copy Command'] : []);
      if (pick === 'Copy Command' && cmd) await ui.copy(cmd);
      return { kind: 'switch_back', command: cmd ?? undefined };
    }
    const result = await request('session/resume', { thread_id: id, workspace, decision: choice });
    await showOutcome(ui, result.report, name, choice === 'fork' ? 'Forked' : 'Resumed');
    return choice === 'fork'
      ? { kind: 'forked', thread_id: result.thread_id, session_id: result.session_id }
      : { kind: 'resumed', result };
  }

  // blocked
  const choice = await ask(ui, 'error', renderBlockedDialog(report, name));
  if (choice === 'fork') {
    const forked = await request('session/fork', { thread_id: id, workspace });
    await ui.notify('info', `Forked “${name}” into a new thread in this workspace.`, []);
    return { kind: 'forked', thread_id: forked.thread_id, session_id: forked.session_id };
  }
  if (choice === 'export') {
    const res = await request('session/resume', { thread_id: id, workspace, decision: 'export' });
    const path = res.report.export_path ?? undefined;
    if (!path) {
      await ui.exportThread(id);
      return { kind: 'exported', path };
    }
    const pick = await ui.notify('info', `Session Keeper: exported “${name}” to ${path}.`, ['Open']);
    if (pick === 'Open') await ui.openFile(path);
    return { kind: 'exported', path };
  }
  if (choice === 'relocate') {
    const result = await request('session/resume', { thread_id: id, workspace, decision: 'relocate' });
    await showOutcome(ui, result.report, name, 'Relocated');
    return { kind: 'resumed', result };
  }
  return { kind: 'cancelled' };
}
