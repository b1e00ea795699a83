/**
 * The read-only details document (`sessionkeeper:` scheme): URI helpers and pure Markdown
 * rendering of a `session/show` result with its timeline.
 */

import { brief, fraction, relativeTime } from '../format';
import type { ShowResult, TimelineEntry } from '../protocol';

export const SCHEME = 'sessionkeeper';

/** Path of the details document of one thread, e.g. `/thread/<id>/Fix payment.md` (the tab shows the title). */
export function detailsPath(threadId: string, title?: string): string {
  const name = (title ?? '').replace(/[\\/:*?"<>|#%\u0000-\u001f]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 60) || threadId;
  return `/thread/${threadId}/${name}.md`;
}

/** Path of a resume report document. */
export function reportPath(threadId: string): string {
  return `/report/${threadId}.md`;
}

/** The thread id in a details path, or undefined for any other path. */
export function threadIdFromPath(path: string): string | undefined {
  const m = /^\/thread\/([^/]+)\/[^/]*\.md$/.exec(path);
  return m?.[1];
}

const SKIP = new Set(['seq', 'ts', 'type', 'summary', 'text']);

/** One timeline line: `seq  time  type  summary`. */
export function renderTimelineEntry(e: TimelineEntry): string {
  const seq = e.seq !== undefined ? String(e.seq).padStart(5) : '    ·';
  const ts = typeof e.ts === 'string' ? e.ts.replace('T', ' ').replace(/\.\d+/, '').replace(/Z$/, 'Z') : '';
  let summary = e.summary;
  if (!summary) {
    const rest = Object.entries(e).filter(([k]) => !SKIP.has(k));
    summary = rest.map(([k, v]) => `${k}=${brief(v, 40)}`).join(' ');
  }
  return `${seq}  ${ts}  ${(e.type ?? '?').padEnd(16)}  ${brief(summary, 120)}`;
}

/** The whole document: summary table, sessions, then the timeline in order. */
export function renderDetails(show: ShowResult, now: Date = new Date()): string {
  const t = show.thread;
  const out = [
    `# ${t.title || 'Untitled'}`,
    '',
    '| | |',
    '|---|---|',
    `| Thread | \`${t.thread_id}\` |`,
    `| State | ${t.state ?? 'unknown'}${t.archived ? ' (archived)' : ''}${t.damaged ? ' — damaged log' : ''} |`,
    `| Workspace | ${t.cwd} |`,
    `| Branch | ${t.branch ?? '—'} |`,
    `| Created | ${t.created_at} |`,
    `| Last activity | ${t.last_activity} (${relativeTime(t.last_activity, now)}) |`,
    `| Todos | ${fraction(t.todos) ?? '—'} |`,
    `| Tests | ${fraction(t.tests) ?? '—'} |`,
    `| Sessions / events | ${t.session_count} / ${t.event_count} |`,
    ...(typeof t.cost_usd === 'number' ? [`| Cost | $${t.cost_usd.toFixed(2)} |`] : []),
    '',
    `## Sessions (${show.sessions.length})`,
    '',
  ];
  for (const s of show.sessions) {
    const extra = Object.entries(s).filter(([k]) => k !== 'session_id').map(([k, v]) => `${k}: ${brief(v, 60)}`);
    out.push(`- \`${s.session_id}\`${extra.length ? ` — ${extra.join(', ')}` : ''}`);
  }
  if (show.damaged?.length) {
    out.push('', '## Damaged records', '');
    for (const d of show.damaged) out.push(`- session \`${d.session_id}\` line ${d.line}: ${d.reason}`);
  }
  const total = show.timeline_total ?? show.timeline.length;
  const shown = total > show.timeline.length ? `, the last ${show.timeline.length} of ${total}` : '';
  out.push('', `## Timeline (${total} events${shown})`, '', '```text');
  for (const e of show.timeline) out.push(renderTimelineEntry(e));
  out.push('```', '');
  return out.join('\n');
}
