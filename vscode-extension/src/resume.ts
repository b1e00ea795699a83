/**
 * The Resume flow: dry-run check, then resume / ask about drift / explain a block, then show what
 * came back (and, for an agent's thread, run the agent's own resume command in a terminal).
 * Nothing continues over drift without an explicit choice, and continuing over files the agent
 * touched asks twice. Pure orchestration over injected dialogs and a `Requester` (unit-tested).
 */

import type { Logger } from './errors';
import type { Report, Requester, ResumeResult } from './protocol';
import {
  renderBlockedDialog, renderContinueConfirm, renderDriftDialog, renderSwitchBack, type Dialog,
} from './ui/drift';
import { renderOutcome } from './ui/report';

/** The agent's own resume command (ResumeResult.command, from the agents slice of the server). */
export interface AgentCommand { argv: string[]; cwd: string; display: string }

export interface ResumeUi {
  /** A modal dialog; resolves to the chosen label, or undefined for Cancel / Escape. */
  modal(severity: 'info' | 'warning' | 'error', message: string, detail: string, labels: string[]): Promise<string | undefined>;
  /** A non-modal notification with buttons. */
  notify(severity: 'info' | 'warning' | 'error', message: string, labels: string[]): Promise<string | undefined>;
  showReport(report: Report, title: string): Promise<void>;
  showDetails(threadId: string): Promise<void>;
  /** Client-side export (the thread as JSON) when the server gave no export path. */
  exportThread(threadId: string): Promise<void>;
  /** Opens a file the server wrote (the export). */
  openFile(path: string): Promise<void>;
  /** Opens another folder (a worktree) in a new window. */
  openFolder(path: string): Promise<void>;
  openSourceControl(): Promise<void>;
  /** Runs an agent's resume command in an integrated terminal in its cwd. */
  runAgent(command: AgentCommand, title: string): void;
}

export interface ResumeDeps {
  request: Requester;
  ui: ResumeUi;
  workspace: string;
  log: Logger;
  /** The thread of the current session, if any (a switch back keeps it running). */
  currentThread(): string | undefined;
}

export type ResumeEnd =
  | { kind: 'resumed'; result: ResumeResult }
  | { kind: 'forked'; thread_id: string; session_id: string | null }
  | { kind: 'switched'; resumed: ResumeEnd | undefined }
  | { kind: 'exported'; path: string | undefined }
  | { kind: 'cancelled' };

async function ask<T extends string>(ui: ResumeUi, severity: 'info' | 'warning' | 'error', d: Dialog<T>): Promise<T | undefined> {
  const label = await ui.modal(severity, d.message, d.detail, d.choices.map((c) => c.label));
  return d.choices.find((c) => c.label === label)?.value;
}

/** The agent command of a resume result, when the server sent a well-formed one. */
export function agentCommand(result: ResumeResult): AgentCommand | undefined {
  const c = (result as { command?: unknown }).command as Partial<AgentCommand> | null | undefined;
  if (!c || !Array.isArray(c.argv) || !c.argv.length || !c.argv.every((a) => typeof a === 'string')) return undefined;
  if (typeof c.cwd !== 'string' || !c.cwd) return undefined;
  return { argv: c.argv, cwd: c.cwd, display: typeof c.display === 'string' && c.display ? c.display : c.argv.join(' ') };
}

/** Shows what a resume brought back; the "Show Report" button opens the full report. */
export async function showOutcome(ui: ResumeUi, report: Report, title: string, verb?: string): Promise<void> {
  const o = renderOutcome(report, title, verb);
  const text = o.attention.length ? `${o.message} ${o.attention.join(' ')}` : o.message;
  const pick = await ui.notify(o.severity, text, ['Show Report']);
  if (pick === 'Show Report') await ui.showReport(report, title);
}

async function resumeWith(deps: ResumeDeps, id: string, name: string, decision: 'continue' | 'fork' | 'relocate'): Promise<ResumeEnd> {
  return resumed(deps, await deps.request('session/resume', { thread_id: id, workspace: deps.workspace, decision }), id, name, decision);
}

/** Shows what a resume brought back and runs an agent's own resume command. */
async function resumed(deps: ResumeDeps, result: ResumeResult, id: string, name: string, decision: 'continue' | 'fork' | 'relocate'): Promise<ResumeEnd> {
  const { ui, log } = deps;
  const r = result.report;
  log.info(`Resume “${name}” (${id}): ${decision} → verdict ${r.verdict}, ${result.session_id ? `session ${result.session_id} of thread ${result.thread_id}` : 'nothing continued'}`);
  const command = agentCommand(result);
  const verb = decision === 'fork' ? 'Forked' : decision === 'relocate' ? 'Relocated' : 'Resumed';
  void showOutcome(ui, r, name, verb);
  if (command) {
    log.info(`Resume “${name}”: running the agent's own resume in a terminal in ${command.cwd}: ${command.display}`);
    ui.runAgent(command, name);
  }
  return decision === 'fork'
    ? { kind: 'forked', thread_id: result.thread_id, session_id: result.session_id }
    : { kind: 'resumed', result };
}

/** Switch back: dry run, then confirm (or explain the refusal), run it, then resume. */
async function switchBack(deps: ResumeDeps, id: string, name: string): Promise<ResumeEnd> {
  const { request, ui, workspace, log } = deps;
  const plan = await request('session/switchBack', { thread_id: id, workspace, dry_run: true });
  const pick = await ask(ui, plan.refused ? 'warning' : 'info', renderSwitchBack(plan, name, workspace));
  log.info(`Switch back for “${name}”: ${plan.refused ? `refused (${plan.refused}: ${plan.message})` : `offered ${plan.command}`}; chose ${pick ?? 'cancel'}`);
  if (pick === 'open_worktree' && plan.worktree) await ui.openFolder(plan.worktree);
  if (pick === 'show_changes') await ui.openSourceControl();
  if (pick !== 'run') return { kind: 'cancelled' };
  const done = await request('session/switchBack', { thread_id: id, workspace, dry_run: false });
  if (!done.ran) {
    log.error(`Switch back for “${name}” failed: ${done.message}`);
    await ui.notify('error', `Session Keeper: could not switch back to ${done.branch ?? 'the recorded checkout'}: ${done.message}`, []);
    return { kind: 'cancelled' };
  }
  log.info(`Switch back for “${name}”: ${done.message}`);
  if (deps.currentThread() === id) {
    void ui.notify('info', `Switched back to ${done.branch}: “${name}” continues where it was.`, []);
    return { kind: 'switched', resumed: undefined };
  }
  return { kind: 'switched', resumed: await resumeFlow(deps, id, name) };
}

/**
 * Resumes `threadId` (or the workspace's latest thread when undefined) in `deps.workspace`.
 * Nothing continues on drift or block until the user decides.
 */
export async function resumeFlow(deps: ResumeDeps, threadId: string | undefined, title?: string): Promise<ResumeEnd> {
  const { request, ui, workspace, log } = deps;
  const report = await request('session/checkResume', threadId ? { thread_id: threadId, workspace } : { latest: true, workspace });
  const id = report.thread_id || threadId;
  if (!id) {
    await ui.notify('info', 'Session Keeper: no session to resume in this workspace.', []);
    return { kind: 'cancelled' };
  }
  const name = title ?? report.title ?? id;
  log.info(`Resume “${name}” (${id}): check says ${report.verdict}${report.differences.length ? ` (${report.differences.map((d) => d.kind).join(', ')})` : ''}`);

  if (report.verdict === 'ok') return resumeWith(deps, id, name, 'continue');

  if (report.verdict === 'drift') {
    const choice = (await ask(ui, 'warning', renderDriftDialog(report, name))) ?? 'cancel';
    log.info(`Resume “${name}”: decision ${choice}`);
    if (choice === 'cancel') return { kind: 'cancelled' };
    if (choice === 'switch_back') {
      if (report.switch_back_worktree && !report.switch_back) {
        await ui.openFolder(report.switch_back_worktree);
        return { kind: 'cancelled' };
      }
      return switchBack(deps, id, name);
    }
    if (choice === 'continue') {
      const confirm = renderContinueConfirm(report, name);
      if (confirm) {
        const again = await ask(ui, 'warning', confirm);
        log.info(`Resume “${name}”: continue over changed files confirmed: ${again === 'continue' ? 'yes' : `no (${again ?? 'cancel'})`}`);
        if (again === 'details') await ui.showDetails(id);
        if (again !== 'continue') return { kind: 'cancelled' };
      }
    }
    return resumeWith(deps, id, name, choice);
  }

  // blocked
  const choice = await ask(ui, 'error', renderBlockedDialog(report, name));
  log.info(`Resume “${name}”: blocked; decision ${choice ?? 'cancel'}`);
  if (choice === 'fork') {
    // session/fork knows only our threads: an agent's thread forks by the agent's own command
    if (report.agent && report.agent !== 'native') return resumeWith(deps, id, name, 'fork');
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
    const moved = await request('session/resume', { thread_id: id, workspace, decision: 'relocate' });
    // nothing continued: no session of ours, and for an agent's thread no command of its own
    if (!moved.session_id && !agentCommand(moved) && moved.report.verdict === 'drift' && report.relocate_to) {
      // the new place differs in more than its path (a branch, HEAD, files): ask about that there
      log.info(`Resume “${name}”: ${report.relocate_to} differs in more than its path; asking`);
      return resumeFlow({ ...deps, workspace: report.relocate_to }, id, name);
    }
    return resumed(deps, moved, id, name, 'relocate');
  }
  return { kind: 'cancelled' };
}
