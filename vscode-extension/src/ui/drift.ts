/**
 * Pure rendering of the decisions a resume can need: the drift dialog (every difference, recorded
 * → now, and choices that say what they do), the second confirmation before continuing over files
 * the agent touched, the blocked dialog, and the switch-back confirmation and refusals.
 *
 * Invariant: the first choice of a dialog is its default (the editor focuses it; Enter picks it),
 * so no dialog that could continue over drift lists a continuing choice first.
 */

import { brief, plural } from '../format';
import type { Difference, Report, SwitchBackResult } from '../protocol';

export type DriftChoice = 'continue' | 'switch_back' | 'fork' | 'cancel';
export type BlockedChoice = 'relocate' | 'fork' | 'export';

export interface Choice<T extends string> { label: string; value: T }

export interface Dialog<T extends string> {
  message: string;
  detail: string;
  /** In order; the first is the default. Cancel is the editor's own close button. */
  choices: Choice<T>[];
}

const KIND_LABEL: Record<string, string> = {
  cwd_missing: 'Working directory missing',
  other_repository: 'Different repository',
  relocated: 'Workspace moved',
  branch: 'Branch',
  head: 'HEAD',
  file_changed: 'File changed',
  file_missing: 'File missing',
  permissions: 'Permissions',
  model: 'Model',
  git_refused: 'Git refuses the repository',
  baseline_unreadable: 'Recorded baseline unreadable',
};

const FILE_KINDS = new Set(['file_changed', 'file_missing']);

export function kindLabel(kind: string): string {
  return KIND_LABEL[kind] ?? kind.replace(/_/g, ' ');
}

function sha(v: unknown): string {
  return typeof v === 'string' && /^[0-9a-f]{40}$/.test(v) ? v.slice(0, 7) : brief(v);
}

/** One difference for humans: "Branch: fix/payment → main", "HEAD: abc1234 → def5678 — why". */
export function renderDifference(d: Difference): string {
  const label = kindLabel(d.kind);
  if (FILE_KINDS.has(d.kind)) {
    const path = d.recorded && typeof d.recorded === 'object' ? String((d.recorded as { path?: unknown }).path ?? '') : '';
    return `${label}: ${d.detail || (d.kind === 'file_missing' ? `${path} is missing` : `${path} changed outside the session`)}`;
  }
  if (d.kind === 'head') return `${label}: ${sha(d.recorded)} → ${sha(d.current)}${d.detail ? ` — ${d.detail}` : ''}`;
  const now = (d.current === null || d.current === undefined) && d.kind.endsWith('_missing') ? 'missing' : brief(d.current);
  const line = `${label}: ${brief(d.recorded)} → ${now}`;
  return d.detail ? `${line} (${d.detail})` : line;
}

/** The branch the thread was recorded on and the one checked out now, when they differ. */
export function branches(report: Report): { recorded?: string; now?: string } {
  const d = report.differences.find((x) => x.kind === 'branch');
  if (!d) return {};
  return {
    ...(typeof d.recorded === 'string' ? { recorded: d.recorded } : {}),
    ...(typeof d.current === 'string' ? { now: d.current } : {}),
  };
}

/** Workspace-relative paths of the files the session recorded that differ on disk now. */
export function touchedDrift(report: Report): string[] {
  return report.differences.filter((d) => FILE_KINDS.has(d.kind)).map((d) => {
    const rec = d.recorded as { path?: unknown } | null;
    return rec && typeof rec.path === 'string' ? rec.path : d.detail;
  });
}

/** Keeps the server's choice list authoritative when it sends one. */
function offered<T extends string>(report: Report, all: Choice<T>[]): Choice<T>[] {
  if (!report.choices || report.choices.length === 0) return all;
  const offeredNow: readonly string[] = report.choices;
  return all.filter((c) => offeredNow.includes(c.value));
}

/** The modal shown on a `drift` verdict: Enter forks (never continues); Cancel does nothing. */
export function renderDriftDialog(report: Report, title: string): Dialog<DriftChoice> {
  const n = report.differences.length;
  const { recorded, now } = branches(report);
  const here = now ? ` on ${now}` : ' here';
  const lines = ['What differs (recorded → now):', ...report.differences.map((d) => `• ${renderDifference(d)}`)];
  const stale = (report.invalidated ?? []).map((i) => `${i.subsystem} (${i.reason})`);
  if (stale.length) lines.push('', `Stale: ${stale.join('; ')}`);
  const canSwitch = Boolean(report.switch_back || report.switch_back_worktree);
  const target = recorded ?? 'the recorded checkout';
  const choices: Choice<DriftChoice>[] = [{ label: `Fork: New Thread${here}`, value: 'fork' }];
  lines.push('', `Fork: New Thread${here} — starts a new thread from this state in the workspace as it is now; “${title}” stays as recorded. (Enter)`);
  if (canSwitch) {
    const label = report.switch_back_worktree ? `Open the Worktree of ${target}…` : `Switch Back to ${target}…`;
    choices.push({ label, value: 'switch_back' });
    lines.push(report.switch_back_worktree
      ? `${label} — ${target} is checked out in ${report.switch_back_worktree}; opens it in a new window.`
      : `${label} — runs \`${report.switch_back}\` after you confirm (never over uncommitted work), then resumes.`);
  }
  choices.push({ label: `Continue Anyway${here}…`, value: 'continue' });
  lines.push(`Continue Anyway${here}… — resumes “${title}” although the workspace differs${touchedDrift(report).length ? ' (asks once more: files the agent touched changed)' : ''}.`);
  lines.push('Cancel — changes nothing.');
  return {
    message: `“${title}” was recorded in a different environment (${plural(n, 'difference')}). Nothing continues until you choose.`,
    detail: lines.join('\n'),
    choices: offered(report, choices),
  };
}

export type ConfirmContinue = 'details' | 'continue';

/** The second question before continuing over drift on files the agent touched. */
export function renderContinueConfirm(report: Report, title: string): Dialog<ConfirmContinue> | undefined {
  const files = touchedDrift(report);
  if (!files.length) return undefined;
  const shown = files.slice(0, 8).map((f) => `• ${f}`);
  if (files.length > 8) shown.push(`• … and ${files.length - 8} more`);
  return {
    message: `Continue “${title}” although ${plural(files.length, 'file')} the agent touched changed outside the session?`,
    detail: ['The agent would go on from its own last versions of:', ...shown, '',
      'What it concluded about these files may no longer hold, and tests it ran are stale.',
      'Show Details — opens the thread (its timeline and diffs); nothing is resumed. (Enter)',
      'Continue Anyway — resumes now.'].join('\n'),
    choices: [{ label: 'Show Details', value: 'details' }, { label: 'Continue Anyway', value: 'continue' }],
  };
}

/** The modal shown on a `blocked` verdict: why it cannot continue, and the ways out. */
export function renderBlockedDialog(report: Report, title: string): Dialog<BlockedChoice> {
  const reasons = report.differences.map((d) => `• ${renderDifference(d)}`);
  for (const d of report.damaged ?? []) reasons.push(`• Damaged log: session ${String(d.session_id)} line ${String(d.line)}: ${String(d.reason)}`);
  if (reasons.length === 0) reasons.push('• The server gave no reason.');
  if (report.relocate_to) reasons.push('', `The repository was found at ${report.relocate_to}: Relocate resumes it there.`);
  // Relocate needs a place to go: without relocate_to the server would stop and nothing would move.
  const ways = [report.relocate_to ? 'Relocate — resume where the repository is now' : '', 'Fork — a new thread here from the recorded state', 'Export — save the thread as JSON'];
  reasons.push('', ways.filter(Boolean).join(' · '));
  return {
    message: `“${title}” cannot be resumed in this workspace.`,
    detail: reasons.join('\n'),
    choices: offered(report, [
      ...(report.relocate_to ? [{ label: 'Relocate', value: 'relocate' as const }] : []),
      { label: 'Fork', value: 'fork' },
      { label: 'Export', value: 'export' },
    ]),
  };
}

export type SwitchChoice = 'run' | 'open_worktree' | 'show_changes';

/** The confirmation before a switch back runs, or why it will not, from a dry run. */
export function renderSwitchBack(plan: SwitchBackResult, title: string, workspace: string): Dialog<SwitchChoice> {
  const branch = plan.branch ?? 'the recorded checkout';
  switch (plan.refused) {
    case null:
      return {
        message: `Switch back to ${branch} and resume “${title}”?`,
        detail: `Session Keeper runs \`${plan.command}\` in ${workspace}, then resumes “${title}”.\nNo uncommitted change is lost: it checked that none is in the way.`,
        choices: [{ label: 'Switch Back and Resume', value: 'run' }],
      };
    case 'other_worktree':
      return {
        message: `${branch} is checked out in another worktree; Session Keeper does not switch this one.`,
        detail: `${plan.worktree ?? plan.message}\nOpen That Worktree — opens it in a new window, where “${title}” can resume.`,
        choices: [{ label: 'Open That Worktree', value: 'open_worktree' }],
      };
    case 'uncommitted':
      return {
        message: `Switching back to ${branch} would lose or carry along uncommitted work; nothing was changed.`,
        detail: ['Uncommitted changes:', ...plan.uncommitted.slice(0, 10).map((p) => `• ${p}`),
          plan.uncommitted.length > 10 ? `• … and ${plan.uncommitted.length - 10} more` : '',
          'Commit or stash them, then switch back again. Open Source Control — shows them.'].filter(Boolean).join('\n'),
        choices: [{ label: 'Open Source Control', value: 'show_changes' }],
      };
    default:
      return { message: `Cannot switch back to ${branch}: ${plan.message}.`, detail: '', choices: [] };
  }
}
