/**
 * Pure rendering of resume reports: the drift dialog (every difference, recorded vs now, and the
 * four choices), the blocked dialog, and the summary of what a resume brought back.
 */

import { brief, fraction } from '../format';
import type { Difference, Report, Verdict } from '../protocol';

export type DriftChoice = 'continue' | 'switch_back' | 'fork' | 'cancel';
export type BlockedChoice = 'relocate' | 'fork' | 'export';

export interface Choice<T extends string> { label: string; value: T }

export interface Dialog<T extends string> {
  message: string;
  detail: string;
  choices: Choice<T>[];
}

const KIND_LABEL: Record<string, string> = {
  cwd_missing: 'Working directory missing',
  other_repository: 'Different repository',
  relocated: 'Workspace moved',
  branch: 'Branch',
  head: 'HEAD commit',
  file_changed: 'File changed',
  file_missing: 'File missing',
  permissions: 'Permissions',
  model: 'Model',
};

/** "Branch: recorded fix/payment → now main (detail)". */
export function renderDifference(d: Difference): string {
  const label = KIND_LABEL[d.kind] ?? d.kind;
  const now = (d.current === null || d.current === undefined) && d.kind.endsWith('_missing') ? 'missing' : brief(d.current);
  const line = `${label}: recorded ${brief(d.recorded)} → now ${now}`;
  return d.detail ? `${line} (${d.detail})` : line;
}

/** The branch the thread was recorded on, if a branch difference says so. */
export function recordedBranch(report: Report): string | undefined {
  const d = report.differences.find((x) => x.kind === 'branch');
  return d && typeof d.recorded === 'string' && d.recorded ? d.recorded : undefined;
}

/** The command the user can run to switch back; shown, never executed. */
export function switchBackCommand(report: Report): string | undefined {
  const branch = recordedBranch(report);
  if (branch) return `git checkout ${branch}`;
  const head = report.differences.find((x) => x.kind === 'head');
  return head && typeof head.recorded === 'string' ? `git checkout ${head.recorded}` : undefined;
}

/** Keeps the server's choice list authoritative when it sends one. */
function offered<T extends string>(report: Report, all: Choice<T>[]): Choice<T>[] {
  if (!report.choices || report.choices.length === 0) return all;
  return all.filter((c) => report.choices.includes(c.value));
}

/** The modal shown on a `drift` verdict. Cancel is the modal's own close button. */
export function renderDriftDialog(report: Report, title: string): Dialog<DriftChoice> {
  const n = report.differences.length;
  const lines = report.differences.map((d) => `• ${renderDifference(d)}`);
  const cmd = switchBackCommand(report);
  if (cmd) lines.push('', `Switch back shows the command to run: ${cmd}`);
  return {
    message: `“${title}” was recorded in a different environment (${n} difference${n === 1 ? '' : 's'}). Continue?`,
    detail: lines.join('\n'),
    choices: offered(report, [
      { label: 'Continue anyway', value: 'continue' },
      { label: 'Switch back', value: 'switch_back' },
      { label: 'Fork here', value: 'fork' },
    ]),
  };
}

/** The modal shown on a `blocked` verdict: why it cannot continue, and the ways out. */
export function renderBlockedDialog(report: Report, title: string): Dialog<BlockedChoice> {
  const reasons = report.differences.map((d) => `• ${renderDifference(d)}`);
  for (const d of report.damaged ?? []) reasons.push(`• Damaged log: session ${d.session_id} line ${d.line}: ${d.reason}`);
  if (reasons.length === 0) reasons.push('• The server gave no reason.');
  if (report.relocate_to) reasons.push('', `The repository was found at ${report.relocate_to}: Relocate resumes it there.`);
  return {
    message: `“${title}” cannot be resumed in this workspace.`,
    detail: reasons.join('\n'),
    choices: offered(report, [
      { label: 'Relocate', value: 'relocate' },
      { label: 'Fork', value: 'fork' },
      { label: 'Export', value: 'export' },
    ]),
  };
}

/** Reads `{done,total}` or a todo list out of the loosely typed `Report.todos`. */
export function todoProgress(todos: unknown): string | undefined {
  if (Array.isArray(todos)) {
    const done = todos.filter((t) => t && typeof t === 'object' && ['done', 'completed'].includes(String((t as { status?: unknown }).status))).length;
    return todos.length ? `${done}/${todos.length}` : undefined;
  }
  if (todos && typeof todos === 'object') {
    const o = todos as { done?: unknown; total?: unknown; items?: unknown };
    if (typeof o.done === 'number' && typeof o.total === 'number') return fraction({ done: o.done, total: o.total });
    if (Array.isArray(o.items)) return todoProgress(o.items);
  }
  return undefined;
}

/** Reads tests passed/total out of the loosely typed `Report.verifier`. */
export function testProgress(verifier: unknown): string | undefined {
  if (!verifier || typeof verifier !== 'object') return undefined;
  const v = verifier as { passed?: unknown; total?: unknown; tests?: unknown };
  if (typeof v.passed === 'number' && typeof v.total === 'number') return fraction({ passed: v.passed, total: v.total });
  return v.tests && typeof v.tests === 'object' ? testProgress(v.tests) : undefined;
}

export interface Outcome {
  severity: 'info' | 'warning';
  /** One line for a notification toast. */
  message: string;
  /** Every item that needs attention, one per line. */
  attention: string[];
}

/** Summarises what a resume brought back and what needs a human. */
export function renderOutcome(report: Report, title: string, verb = 'Resumed'): Outcome {
  const facts: string[] = [];
  if (report.restored_to_seq !== null && report.restored_to_seq !== undefined) facts.push(`restored to event ${report.restored_to_seq}`);
  const todos = todoProgress(report.todos);
  facts.push(todos ? `todos ${todos}` : 'no todos');
  const tests = testProgress(report.verifier);
  facts.push(tests ? `tests ${tests}${report.rerun_verifier ? ' (stale)' : ''}` : 'tests not run');

  const attention: string[] = [];
  // A fork is recorded in the current environment: it does not continue over the differences.
  if (report.verdict === 'drift' && report.differences.length && verb !== 'Forked') {
    const kinds = [...new Set(report.differences.map((d) => KIND_LABEL[d.kind] ?? d.kind))].join(', ').toLowerCase();
    attention.push(`Continuing over ${report.differences.length} recorded difference${report.differences.length === 1 ? '' : 's'} (${kinds}).`);
  }
  for (const op of report.in_doubt_operations ?? []) {
    attention.push(`Operation ${op.operation_id} (${op.tool}, event ${op.seq}) started but never committed — check it before redoing it.`);
  }
  if (report.rerun_verifier) {
    const why = (report.invalidated ?? []).filter((i) => i.subsystem === 'verifier').map((i) => i.reason);
    attention.push(`Test results are stale${why.length ? `: ${why.join('; ')}` : ''} — rerun the verifier.`);
  }
  for (const i of report.invalidated ?? []) {
    if (i.subsystem !== 'verifier') attention.push(`${i.subsystem} invalidated: ${i.reason}`);
  }
  for (const q of report.quarantined ?? []) attention.push(`Quarantined ${q.bytes} bytes of a torn log tail (${q.path}).`);
  for (const h of report.hook_failures ?? []) attention.push(`Hook ${h.hook} (${h.source}) failed: ${h.error}`);

  const needs = attention.length ? ` — ${attention.length} ${attention.length === 1 ? 'item needs' : 'items need'} attention` : '';
  return {
    severity: attention.length ? 'warning' : 'info',
    message: `${verb} “${title}”: ${facts.join(', ')}${needs}.`,
    attention,
  };
}

/** Markdown for a full report (shown in the read-only details document). */
export function renderReportMarkdown(report: Report, title: string): string {
  const out = [`# Resume report — ${title}`, '', `Verdict: **${verdictWord(report.verdict)}**`, `Thread: \`${report.thread_id}\``];
  if (report.restored_to_seq !== null && report.restored_to_seq !== undefined) out.push(`Restored to event: ${report.restored_to_seq}`);
  if (report.differences.length) out.push('', '## Differences (recorded → now)', ...report.differences.map((d) => `- ${renderDifference(d)}`));
  const o = renderOutcome(report, title);
  if (o.attention.length) out.push('', '## Needs attention', ...o.attention.map((a) => `- ${a}`));
  for (const key of ['todos', 'verifier', 'permissions', 'model', 'cost', 'attribution'] as const) {
    if (report[key] !== undefined) out.push('', `## ${key}`, '```json', JSON.stringify(report[key], null, 2), '```');
  }
  return out.join('\n') + '\n';
}

export function verdictWord(v: Verdict | null | undefined): string {
  return v === 'ok' ? 'ok' : v === 'drift' ? 'drift' : v === 'blocked' ? 'blocked' : 'unknown';
}
