/**
 * What a resume brought back: the one-line outcome for a notification, and the full report as a
 * page (verdict, differences, what needs a human, every subsystem generically — a subsystem named
 * in `invalidated` is marked stale, so a new server subsystem needs no extension change).
 */

import { plural } from '../format';
import type { Report, Verdict } from '../protocol';
import { kindLabel, renderDifference } from './drift';
import { esc } from './html';

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
  for (const i of report.invalidated ?? []) stale.set(i.subsystem, [...(stale.get(i.subsystem) ?? []), i.reason.replace(/^stale:\s*/i, '')]);
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
    const kinds = [...new Set(report.differences.map((d) => kindLabel(d.kind)))].join(', ').toLowerCase();
    attention.push(`Continuing over ${plural(report.differences.length, 'recorded difference')} (${kinds}).`);
  }
  for (const op of report.in_doubt_operations ?? []) {
    attention.push(`Operation ${String(op.operation_id)} (${String(op.tool)}, event ${String(op.seq)}) started but never committed — check it before redoing it.`);
  }
  if (report.rerun_verifier) {
    const why = (report.invalidated ?? []).filter((i) => i.subsystem === 'verifier').map((i) => i.reason);
    attention.push(`Test results are stale${why.length ? `: ${why.join('; ')}` : ''} — rerun the verifier.`);
  }
  for (const i of report.invalidated ?? []) {
    if (i.subsystem !== 'verifier') attention.push(`${i.subsystem} is stale: ${i.reason}`);
  }
  for (const q of report.quarantined ?? []) attention.push(`Quarantined ${String(q.bytes)} bytes of a torn log tail (${String(q.path)}).`);
  for (const h of report.hook_failures ?? []) attention.push(`Hook ${String(h.hook)} (${String(h.source)}) failed: ${String(h.error)}`);
  const needs = attention.length ? ` — ${attention.length} ${attention.length === 1 ? 'item needs' : 'items need'} attention` : '';
  return {
    severity: attention.length ? 'warning' : 'info',
    message: `${verb} “${title}”: ${facts.join(', ')}${needs}.`,
    attention,
  };
}

export function verdictWord(v: Verdict | null | undefined): string {
  return v === 'ok' ? 'ok' : v === 'drift' ? 'drift' : v === 'blocked' ? 'blocked' : 'unknown';
}

/** The report's body (HTML) for a webview page. */
export function renderReportHtml(report: Report, title: string): string {
  const out = [`<h1>Resume report — ${esc(title)}</h1>`,
    `<p class="sub"><span class="badge state-${esc(report.verdict)}">${esc(verdictWord(report.verdict))}</span>`
    + `${report.decision ? `decision: ${esc(report.decision)} · ` : ''}restored to event ${report.restored_to_seq} · ${esc(report.workspace)}</p>`];
  if (report.differences.length) {
    out.push('<h2>Differences (recorded → now)</h2><ul>', ...report.differences.map((d) => `<li>${esc(renderDifference(d))}</li>`), '</ul>');
  }
  const o = renderOutcome(report, title);
  if (o.attention.length) out.push('<h2>Needs attention</h2><ul>', ...o.attention.map((a) => `<li>${esc(a)}</li>`), '</ul>');
  const lines = subsystemLines(report);
  if (lines.length) {
    out.push('<h2>Restored state</h2><table>');
    for (const l of lines) {
      out.push(`<tr><th>${esc(l.name)}</th><td>${esc(l.headline || '—')}${l.stale ? ` <span class="stale">— stale: ${esc(l.stale)}</span>` : ''}</td></tr>`);
    }
    out.push('</table>');
  }
  if (report.notes?.length) out.push('<h2>Notes</h2><ul>', ...report.notes.map((n) => `<li>${esc(n)}</li>`), '</ul>');
  return out.join('\n');
}
