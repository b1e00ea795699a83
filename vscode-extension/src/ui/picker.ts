/**
 * The session picker: pure QuickPick item builders and the lazy, paged picking flow.
 * The flow talks to a minimal QuickPick shape so it runs against a fake in unit tests.
 */

import { fraction, relativeTime, stateIcon } from '../format';
import type { ListResult, ThreadSummary } from '../protocol';

export type ThreadAction = 'resume' | 'fork' | 'archive' | 'unarchive' | 'details';

export interface PickerItem {
  label: string;
  description?: string;
  detail?: string;
  alwaysShow?: boolean;
  kind?: number;
  thread?: ThreadSummary;
  loadMore?: true;
  action?: ThreadAction;
}

/** Sorts newest activity first (the server already does; this keeps pages merged in order). */
export function newestFirst(threads: ThreadSummary[]): ThreadSummary[] {
  return [...threads].sort((a, b) => (Date.parse(b.last_activity ?? '') || 0) - (Date.parse(a.last_activity ?? '') || 0));
}

/** One picker row: state icon + title; branch and last activity; todo/test progress. */
export function threadItem(t: ThreadSummary, now: Date = new Date()): PickerItem {
  const state = t.damaged ? 'blocked' : t.state;
  const desc = [t.branch ? `$(git-branch) ${t.branch}` : undefined, relativeTime(t.last_activity, now)];
  const detail: string[] = [];
  const todos = fraction(t.todos);
  detail.push(todos ? `todos ${todos}` : 'no todos');
  const tests = fraction(t.tests);
  detail.push(tests ? `tests ${tests}` : 'tests not run');
  detail.push(`${t.session_count} session${t.session_count === 1 ? '' : 's'}`);
  if (t.state === 'drift') detail.push('drift');
  if (state === 'blocked') detail.push(t.damaged ? 'damaged log' : 'blocked');
  if (t.archived) detail.push('archived');
  return {
    label: `${stateIcon(state, t.archived)} ${t.title || 'Untitled'}`,
    description: desc.filter(Boolean).join(' · '),
    detail: detail.join(' · '),
    thread: t,
  };
}

export const LOAD_MORE_LABEL = '$(ellipsis) Load more…';

/** All rows for the threads loaded so far, plus "Load more…" when the server has another page. */
export function pickerItems(threads: ThreadSummary[], nextCursor: string | null, now: Date = new Date()): PickerItem[] {
  const items = newestFirst(threads).map((t) => threadItem(t, now));
  if (nextCursor) items.push({ label: LOAD_MORE_LABEL, alwaysShow: true, loadMore: true });
  return items;
}

/** The second QuickPick: what can be done with one thread. */
export function actionItems(t: ThreadSummary): PickerItem[] {
  const items: PickerItem[] = [
    { label: '$(debug-start) Resume', description: 'check the workspace, then continue', action: 'resume' },
    { label: '$(repo-forked) Fork', description: 'start a new thread from here', action: 'fork' },
    t.archived
      ? { label: '$(inbox) Unarchive', action: 'unarchive' }
      : { label: '$(archive) Archive', description: 'hide from the list', action: 'archive' },
    { label: '$(info) Details', description: 'timeline and sessions', action: 'details' },
  ];
  return items.map((i) => ({ ...i, thread: t }));
}

/** Minimal shape of vscode.QuickPick used by the flow. */
export interface QuickPickLike<T> {
  items: readonly T[];
  busy: boolean;
  title: string | undefined;
  placeholder: string | undefined;
  matchOnDescription: boolean;
  matchOnDetail: boolean;
  keepScrollPosition?: boolean;
  readonly selectedItems: readonly T[];
  onDidAccept(cb: () => void): { dispose(): void };
  onDidHide(cb: () => void): { dispose(): void };
  show(): void;
  hide(): void;
  dispose(): void;
}

export interface PickThreadDeps {
  createQuickPick(): QuickPickLike<PickerItem>;
  list(cursor: string | undefined): Promise<ListResult>;
  onError(err: unknown): void;
  now?: () => Date;
}

/**
 * Shows the picker and lists lazily: the first page is requested only when the picker opens,
 * further pages when the user accepts "Load more…". Resolves to the chosen thread or undefined.
 */
export function pickThread(deps: PickThreadDeps, title = 'Session Keeper: Sessions'): Promise<ThreadSummary | undefined> {
  const qp = deps.createQuickPick();
  qp.title = title;
  qp.placeholder = 'Loading sessions…';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.keepScrollPosition = true;
  const threads: ThreadSummary[] = [];
  let cursor: string | null = null;
  const now = deps.now ?? (() => new Date());

  const load = async (): Promise<void> => {
    qp.busy = true;
    try {
      const page = await deps.list(cursor ?? undefined);
      threads.push(...page.threads);
      cursor = page.next_cursor;
      qp.items = pickerItems(threads, cursor, now());
      qp.placeholder = threads.length ? 'Pick a session (newest first)' : 'No sessions recorded for this workspace';
    } catch (err) {
      qp.placeholder = 'Could not list sessions (see the log)';
      deps.onError(err);
    } finally {
      qp.busy = false;
    }
  };

  return new Promise((resolve) => {
    let done = false;
    const finish = (t: ThreadSummary | undefined): void => {
      if (done) return;
      done = true;
      resolve(t);
      qp.dispose();
    };
    qp.onDidAccept(() => {
      const sel = qp.selectedItems[0];
      if (!sel) return;
      if (sel.loadMore) { void load(); return; }
      finish(sel.thread);
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
    void load();
  });
}
