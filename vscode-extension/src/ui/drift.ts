/**
 * Pure rendering of resume reports: the drift dialog (every difference, recorded vs now, and the
 * four choices), the blocked dialog, and the summary of what a resume brought back.
 */

import { brief } from '../format';
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
  const offeredNow: readonly string[] = report.choices;
  return all.filter((c) => offeredNow.includes(c.value));
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

/** Subsystems whose headline the one-line outcome shows (the report shows every subsystem). */
export const OUTCOME_SUBSYSTEMS = ['todos', 'verifier'];

export interface SubsystemLine {
  name: string;
  headline: string;
  /** Why the restored state can no longer be trusted (the subsystem is named in `invalidated`). */
  stale?: string;
}

/** Every subsystem of a report, generically: name, headline, and why it is stale when it is. */
export function subsystemLines(report: Report): SubsystemLine[] {
  const stale = new Map<string, string[]>();
  for (const i of report.invalidated ?? []) stale.set(i.subsystem, [...(stale.get(i.subsystem) ?? []), i.reason]);
  const lines: SubsystemLine[] = Object.entries(report.subsystems ?? {}).map(([name, s]) => {
    const why = stale.get(name);
    return { name, headline: s.headline, ...(why ? { stale: why.join('; ') } : {}) };
  });
  for (const [name, why] of stale) if (!(name in (report.subsystems ?? {}))) lines.push({ name, headline: '', stale: why.join('; ') });
  return lines;
}

/** "todos: 1/3 done" (with " (stale)" when invalidated). */
export function renderSubsystemLine(l: SubsystemLine): string {
  return `${l.name}: ${l.headline || '—'}${l.stale ? ' (stale)' : ''}`;
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
  const lines = subsystemLines(report);
  for (const name of OUTCOME_SUBSYSTEMS) {
    const l = lines.find((x) => x.name === name);
    if (l?.headline) facts.push(renderSubsystemLine(l));
  }

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
    if (i.subsystem !== 'verifier') attention.push(`${i.subsystem} is stale: ${i.reason}`);
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
  const lines = subsystemLines(report);
  if (lines.length) {
    out.push('', '## Restored state');
    for (const l of lines) out.push(`- **${l.name}**: ${l.headline || '—'}${l.stale ? ` — stale: ${l.stale}` : ''}`);
  }
  if (report.notes?.length) out.push('', '## Notes', ...report.notes.map((n) => `- ${n}`));
  return out.join('\n') + '\n';
}

export function verdictWord(v: Verdict | null | undefined): string {
  return v === 'ok' ? 'ok' : v === 'drift' ? 'drift' : v === 'blocked' ? 'blocked' : 'unknown';
}
