/**
 * The Sessions view as data: which rows there are (threads; under each its sessions and its
 * file-change timeline) and what each row shows. Pure: the tree adapter in vscodeapi.ts draws the
 * ItemModels, the SessionsModel (sessions.ts) holds the threads, `show` fetches a thread's details.
 */

import { agentInfo, baselineText } from '../agents';
import { fraction, money, plural, relativeTime, shortId } from '../format';
import type { SessionSummary, ShowResult, ThreadSummary, TimelineEntry } from '../protocol';
import type { ItemModel, TreeSource } from '../vscodeapi';

export const THREAD_SCHEME = 'sessionkeeper-thread';

export type SessionsNode =
  | { kind: 'thread'; thread: ThreadSummary }
  | { kind: 'group'; group: 'sessions' | 'timeline'; thread: ThreadSummary }
  | { kind: 'session'; thread: ThreadSummary; session: SessionSummary }
  | { kind: 'entry'; thread: ThreadSummary; entry: TimelineEntry }
  | { kind: 'more' }
  | { kind: 'note'; text: string; icon: string; command?: ItemModel['command'] };

const STATE_MARK: Record<string, string> = { drift: '⚠', blocked: '✕' };

/** The row's one-line description: drift reason first, then branch, age, todos, tests, cost. */
export function describeThread(t: ThreadSummary, now: Date = new Date(), folder = false): string {
  const parts: string[] = [];
  if (t.current) parts.push('current');
  if (folder && t.cwd) parts.push(t.cwd.split(/[\\/]/).filter(Boolean).pop() ?? t.cwd);
  const state = t.damaged ? 'blocked' : t.state;
  if (state === 'drift' || state === 'blocked') parts.push(`${STATE_MARK[state]} ${t.state_reason ?? (t.damaged ? 'log damaged' : state)}`);
  if (t.branch && !(state === 'drift' && /^branch /.test(t.state_reason ?? ''))) parts.push(t.branch);
  parts.push(relativeTime(t.last_activity, now));
  const todos = fraction(t.todos);
  if (todos) parts.push(`todos ${todos}`);
  const tests = fraction(t.tests);
  if (tests) parts.push(`tests ${tests}`);
  const cost = money(t.cost_usd);
  if (cost) parts.push(cost);
  if (t.archived) parts.push('archived');
  return parts.join(' · ');
}

/** The row's tooltip (Markdown): agent and model, state and why, branch, progress, place. */
export function threadTooltip(t: ThreadSummary, now: Date = new Date()): string {
  const agent = agentInfo(t.agent);
  const head = [`**${md(t.title || 'Untitled')}**`, `${agent.name}${t.model ? ` · ${md(t.model)}` : ''}`];
  const state = t.damaged ? 'blocked' : t.state;
  const lines = [head.join(' — ')];
  if (t.current) lines.push('$(circle-filled) The current session of this window');
  if (state === 'drift') lines.push(`$(warning) Drift: ${md(t.state_reason ?? 'the workspace differs from the recording')}`);
  else if (state === 'blocked') lines.push(`$(error) Blocked: ${md(t.state_reason ?? 'cannot resume here')}`);
  else if (state === 'ok') lines.push('$(pass) A resume here finds the recorded environment');
  lines.push(`Branch ${md(t.branch ?? '—')} · last activity ${relativeTime(t.last_activity, now)}`);
  const baseline = baselineText(t.baseline, t.agent);
  if (baseline) lines.push(`Baseline ${md(baseline)}`);
  const facts = [`todos ${fraction(t.todos) ?? '—'}`, `tests ${fraction(t.tests) ?? 'not run'}`];
  const cost = money(t.cost_usd);
  if (cost) facts.push(cost);
  facts.push(plural(t.session_count, 'session'), plural(t.event_count, 'event'));
  lines.push(facts.join(' · '));
  if (t.cwd) lines.push(code(t.cwd));
  if (t.forked_from && typeof t.forked_from.thread_id === 'string') lines.push(`Forked from ${shortId(t.forked_from.thread_id)}`);
  return lines.join('\n\n');
}

/** A `sessionkeeper-thread:` URI carrying what the decoration shows (current, state). */
export function threadUri(t: ThreadSummary): string {
  const state = t.damaged ? 'blocked' : t.state ?? 'unknown';
  return `${THREAD_SCHEME}:/${t.thread_id}?state=${state}${t.current ? '&current=1' : ''}`;
}

/** The badge and colour of a thread row, read back from its URI. */
export function decorationOf(uri: string): { badge?: string; tooltip?: string; color?: string } | undefined {
  const q = uri.split('?')[1] ?? '';
  const params = new Map(q.split('&').map((kv) => kv.split('=') as [string, string]));
  const current = params.get('current') === '1';
  const state = params.get('state');
  const color = state === 'drift' ? 'list.warningForeground' : state === 'blocked' ? 'list.errorForeground' : undefined;
  if (!current && !color) return undefined;
  return {
    ...(current ? { badge: '●', tooltip: 'Current session' } : { badge: state === 'drift' ? '!' : '✕', tooltip: state }),
    ...(color ? { color } : {}),
  };
}

export function threadRow(t: ThreadSummary, now: Date = new Date(), folder = false): ItemModel {
  return {
    id: `thread:${t.thread_id}`,
    label: t.title || 'Untitled',
    description: describeThread(t, now, folder),
    tooltip: threadTooltip(t, now),
    icon: { media: agentInfo(t.agent).icon },
    contextValue: `thread${t.archived ? '.archived' : '.active'}${t.current ? '.current' : ''}`,
    collapsible: 'collapsed',
    resourceUri: threadUri(t),
  };
}

export function sessionRow(thread: ThreadSummary, s: SessionSummary, now: Date = new Date()): ItemModel {
  const how = s.source === 'startup' ? 'started' : s.source === 'resume' ? 'resumed' : s.source;
  return {
    id: `session:${s.session_id}`,
    label: `${how} ${relativeTime(s.started_at, now)}`,
    description: [s.branch, plural(s.event_count, 'event'), s.status !== 'ok' ? s.status : undefined, s.archived ? 'archived' : undefined]
      .filter(Boolean).join(' · '),
    tooltip: `Session ${code(s.session_id)} of “${md(thread.title || 'Untitled')}”\n\n${s.path ? code(s.path) : ''}`,
    icon: { codicon: s.status === 'ok' ? 'debug-start' : 'error' },
    contextValue: 'session',
    collapsible: 'none',
  };
}

const ENTRY_ICONS: Record<string, string> = {
  file_change: 'diff', lifecycle: 'debug-restart', session_meta: 'play', todo: 'checklist', verifier: 'beaker',
  git_moved: 'git-branch', operation: 'tools', compacted: 'fold', title: 'edit', model: 'hubot', permissions: 'shield',
  baseline: 'git-commit',
};

/** A timeline row; a file change opens its diff when clicked. */
export function entryRow(thread: ThreadSummary, e: TimelineEntry): ItemModel {
  const time = e.ts ? e.ts.slice(11, 16) : '';
  const file = e.type === 'file_change' && e.path;
  return {
    id: `entry:${thread.thread_id}:${e.seq ?? e.ts ?? e.summary}`,
    label: e.summary,
    description: [e.seq !== null ? `#${e.seq}` : undefined, time].filter(Boolean).join(' · '),
    tooltip: `${md(e.type)} at event ${e.seq ?? '—'}${e.ts ? ` (${e.ts})` : ''}${file ? `\n\nClick to open the diff of ${code(e.path ?? '')}` : ''}`,
    icon: { codicon: ENTRY_ICONS[e.type] ?? 'circle-small' },
    contextValue: file ? 'entry.file' : 'entry',
    collapsible: 'none',
    ...(file ? { command: { command: 'sessionKeeper.openDiff', title: 'Open Diff', arguments: [{ thread_id: thread.thread_id, seq: e.seq, path: e.path }] } } : {}),
  };
}

/** A code span (its content is not Markdown, so it is not escaped; backticks are dropped). */
function code(text: string): string {
  return `\`${text.replace(/`/g, '')}\``;
}

function md(text: string): string {
  return text.replace(/([\\`*_{}[\]<>()#+\-.!|])/g, '\\$1');
}

/** What the tree asks of the rest of the extension. */
export interface SessionsSource {
  threads(): ThreadSummary[];
  hasMore(): boolean;
  /** Rows shown instead of threads (loading, an error, nothing recorded), or none. */
  notice(): { text: string; icon: string; command?: ItemModel['command'] } | undefined;
  show(threadId: string): Promise<ShowResult>;
  /** Threads of every workspace are listed (rows then name their folder). */
  allWorkspaces(): boolean;
  now?: () => Date;
}

/** The TreeSource of the Sessions view. */
export class SessionsTree implements TreeSource<SessionsNode> {
  constructor(private readonly src: SessionsSource) {}

  roots(): SessionsNode[] {
    const notice = this.src.notice();
    if (notice) return [{ kind: 'note', ...notice }];
    const rows: SessionsNode[] = this.src.threads().map((thread) => ({ kind: 'thread', thread }));
    if (this.src.hasMore()) rows.push({ kind: 'more' });
    return rows;
  }

  async children(node: SessionsNode): Promise<SessionsNode[]> {
    if (node.kind === 'thread') {
      return [{ kind: 'group', group: 'sessions', thread: node.thread }, { kind: 'group', group: 'timeline', thread: node.thread }];
    }
    if (node.kind !== 'group') return [];
    try {
      const shown = await this.src.show(node.thread.thread_id);
      if (node.group === 'sessions') return [...shown.sessions].reverse().map((session) => ({ kind: 'session', thread: node.thread, session }));
      return [...shown.timeline].reverse().map((entry) => ({ kind: 'entry', thread: node.thread, entry }));
    } catch (err) {
      return [{ kind: 'note', text: `Could not load: ${err instanceof Error ? err.message : String(err)}`, icon: 'error' }];
    }
  }

  item(node: SessionsNode): ItemModel {
    const now = this.src.now?.() ?? new Date();
    switch (node.kind) {
      case 'thread': return threadRow(node.thread, now, this.src.allWorkspaces());
      case 'group': return node.group === 'sessions'
        ? { id: `sessions:${node.thread.thread_id}`, label: 'Sessions', description: plural(node.thread.session_count, 'run'), icon: { codicon: 'versions' }, collapsible: 'collapsed', contextValue: 'group' }
        : { id: `timeline:${node.thread.thread_id}`, label: 'Timeline', description: 'file changes and lifecycle, newest first', icon: { codicon: 'history' }, collapsible: 'collapsed', contextValue: 'group' };
      case 'session': return sessionRow(node.thread, node.session, now);
      case 'entry': return entryRow(node.thread, node.entry);
      case 'more': return { id: 'more', label: 'Load more…', icon: { codicon: 'ellipsis' }, command: { command: 'sessionKeeper.loadMoreSessions', title: 'Load More' } };
      case 'note': return { label: node.text, icon: { codicon: node.icon }, ...(node.command ? { command: node.command } : {}) };
    }
  }
}
