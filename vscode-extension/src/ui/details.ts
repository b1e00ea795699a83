/**
 * The details page of one thread (a webview): summary, what a resume here would find, sessions,
 * and the timeline with clickable paths, Open diff, Rewind file… and Rewind to here…; a Changes
 * by the agent button. Pure HTML from `session/show` (and `session/checkResume` when it answered).
 */

import { agentInfo, baselineText } from '../agents';
import { fraction, money, plural, relativeTime } from '../format';
import type { Report, ShowResult, TimelineEntry } from '../protocol';
import { renderDifference } from './drift';
import { action, esc, link } from './html';
import { subsystemLines } from './report';

/** Page messages the details page sends (`cmd` plus these fields). */
export type DetailsMessage =
  | { cmd: 'openFile'; path: string }
  | { cmd: 'openDiff'; seq: number; path: string }
  | { cmd: 'rewindFile'; seq: number; path: string }
  | { cmd: 'rewindTo'; seq: number }
  | { cmd: 'changes' }
  | { cmd: 'resume' }
  | { cmd: 'fork' }
  | { cmd: 'refresh' };

/** A details page message, checked field by field; undefined for anything malformed. */
export function detailsMessage(m: { cmd: string } & Record<string, unknown>): DetailsMessage | undefined {
  const seq = typeof m.seq === 'number' && Number.isInteger(m.seq) ? m.seq : undefined;
  const path = typeof m.path === 'string' && m.path ? m.path : undefined;
  switch (m.cmd) {
    case 'openFile': return path ? { cmd: 'openFile', path } : undefined;
    case 'openDiff': case 'rewindFile': return path && seq !== undefined ? { cmd: m.cmd, seq, path } : undefined;
    case 'rewindTo': return seq !== undefined ? { cmd: 'rewindTo', seq } : undefined;
    case 'changes': case 'resume': case 'fork': case 'refresh': return { cmd: m.cmd };
    default: return undefined;
  }
}

function time(ts: string | null): string {
  return ts ? ts.replace('T', ' ').replace(/\.\d+/, '').replace(/Z$/, ' UTC') : '';
}

/** One timeline row: seq, time, what happened; file changes get a link and their actions. */
export function renderTimelineRow(e: TimelineEntry): string {
  const seq = e.seq ?? null;
  let what = esc(e.summary);
  const acts: string[] = [];
  if (e.type === 'file_change' && e.path && seq !== null) {
    what = `${link('openFile', e.path, { path: e.path }, 'Open the file')} <span class="sub">by ${esc(e.author ?? 'agent')}</span>`;
    acts.push(action('openDiff', 'Open diff', { seq, path: e.path }, 'The file before and after this change'));
    acts.push(action('rewindFile', 'Rewind file…', { seq, path: e.path }, 'Restore this file as it was after this event (with a preview)'));
  }
  if (seq !== null) acts.push(action('rewindTo', 'Rewind to here…', { seq }, 'Restore every file the session touched as it was at this event (with a preview)'));
  return `<tr class="entry"><td class="seq">#${seq ?? '·'}</td><td class="seq">${esc(time(e.ts))}</td><td class="seq">${esc(e.type)}</td><td>${what}</td><td>${acts.join('')}</td></tr>`;
}

/** The body of the details page. */
export function renderDetailsHtml(show: ShowResult, check: Report | undefined, now: Date = new Date()): string {
  const t = show.thread;
  const agent = agentInfo(t.agent);
  const state = t.damaged ? 'blocked' : t.state;
  const baseline = baselineText(t.baseline, t.agent);
  const out = [
    `<h1>${esc(t.title || 'Untitled')}</h1>`,
    `<p class="sub">${esc(agent.name)}${t.model ? ` · ${esc(t.model)}` : ''} · thread <code>${esc(t.thread_id)}</code></p>`,
    `<p>${t.current ? '<span class="badge">current session</span>' : ''}${state ? `<span class="badge state-${esc(state)}">${esc(state)}</span>` : ''}${t.state_reason ? esc(t.state_reason) : ''}</p>`,
    `<p>${action('resume', 'Resume…')}${action('fork', 'Fork')}${action('changes', 'Changes by the agent', {}, 'Every file the session changed, in a multi-file diff')}${action('refresh', 'Refresh')}</p>`,
    '<table>',
    `<tr><th>Workspace</th><td>${esc(t.cwd ?? '—')}</td></tr>`,
    `<tr><th>Branch</th><td>${esc(t.branch ?? '—')}</td></tr>`,
    ...(baseline ? [`<tr><th>Baseline</th><td class="baseline-${esc(t.baseline ?? '')}">${esc(baseline)}</td></tr>`] : []),
    `<tr><th>Last activity</th><td>${esc(relativeTime(t.last_activity, now))} (${esc(time(t.last_activity))}); started ${esc(time(t.created_at))}</td></tr>`,
    `<tr><th>Todos</th><td>${esc(fraction(t.todos) ?? '—')}</td></tr>`,
    `<tr><th>Tests</th><td>${esc(fraction(t.tests) ?? 'not run')}</td></tr>`,
    `<tr><th>Cost</th><td>${esc(money(t.cost_usd) ?? '—')}</td></tr>`,
    `<tr><th>Sessions</th><td>${esc(plural(t.session_count, 'session'))}, ${esc(plural(t.event_count, 'event'))}${t.archived ? ' · archived' : ''}</td></tr>`,
    '</table>',
  ];
  if (check) {
    out.push(`<h2>A resume here</h2><p><span class="badge state-${esc(check.verdict)}">${esc(check.verdict)}</span>${check.differences.length ? '' : 'the workspace is as recorded'}</p>`);
    if (check.differences.length) out.push('<ul>', ...check.differences.map((d) => `<li>${esc(renderDifference(d))}</li>`), '</ul>');
    const lines = subsystemLines(check);
    if (lines.length) {
      out.push('<table>');
      for (const l of lines) out.push(`<tr><th>${esc(l.name)}</th><td>${esc(l.headline || '—')}${l.stale ? ` <span class="stale">— stale: ${esc(l.stale)}</span>` : ''}</td></tr>`);
      out.push('</table>');
    }
  }
  out.push(`<h2>Sessions (${show.sessions.length})</h2><ul>`);
  for (const s of show.sessions) {
    out.push(`<li>${esc(s.source)} ${esc(relativeTime(s.started_at, now))} · ${esc(s.branch ?? '—')} · ${esc(plural(s.event_count, 'event'))}${s.status !== 'ok' ? ` · <span class="err">${esc(s.status)}</span>` : ''} <span class="sub"><code>${esc(s.session_id)}</code></span></li>`);
  }
  out.push('</ul>');
  if (show.damaged.length) {
    out.push('<h2>Damaged records</h2><ul>', ...show.damaged.map((d) => `<li class="err">session ${esc(String(d.session_id))} line ${esc(String(d.line))}: ${esc(String(d.reason))}</li>`), '</ul>');
  }
  const total = show.timeline_total;
  const shown = total > show.timeline.length ? `, the last ${show.timeline.length}` : '';
  out.push(`<h2>Timeline (${plural(total, 'entry', 'entries')}${shown})</h2><table>`);
  for (const e of show.timeline) out.push(renderTimelineRow(e));
  out.push('</table>');
  return out.join('\n');
}
