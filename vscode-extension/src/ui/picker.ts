/**
 * The session picker: pure QuickPick item builders and the lazy, paged picking flow. Each row says
 * which agent (and model) recorded the thread, what drifted, and which one is current; its buttons
 * act on it directly (Resume is Enter), so no second QuickPick is needed.
 * The flow talks to a minimal QuickPick shape so it runs against a fake in unit tests.
 */

import { agentInfo } from '../agents';
import { fraction, money, plural, relativeTime, stateIcon } from '../format';
import type { ListResult, ThreadSummary } from '../protocol';

export type ThreadAction = 'resume' | 'fork' | 'archive' | 'unarchive' | 'details';

export interface ItemButton { iconId: string; tooltip: string; action: ThreadAction }

export interface PickerItem {
  label: string;
  description?: string;
  detail?: string;
  alwaysShow?: boolean;
  thread?: ThreadSummary;
  loadMore?: true;
  buttons?: ItemButton[];
}

/** Sorts newest activity first (the server already does; this keeps pages merged in order). */
export function newestFirst(threads: ThreadSummary[]): ThreadSummary[] {
  return [...threads].sort((a, b) => (Date.parse(b.last_activity ?? '') || 0) - (Date.parse(a.last_activity ?? '') || 0));
}

/** The buttons of a row: Resume, Fork, Details, Archive (Unarchive when archived). */
export function rowButtons(t: ThreadSummary): ItemButton[] {
  return [
    { iconId: 'debug-start', tooltip: 'Resume (check the workspace first)', action: 'resume' },
    { iconId: 'repo-forked', tooltip: 'Fork: a new thread from here', action: 'fork' },
    { iconId: 'info', tooltip: 'Details', action: 'details' },
    t.archived
      ? { iconId: 'inbox', tooltip: 'Unarchive', action: 'unarchive' }
      : { iconId: 'archive', tooltip: 'Archive (with Undo)', action: 'archive' },
  ];
}

/** One picker row: state + title; agent, model, current; branch, age, progress and what drifted. */
export function threadItem(t: ThreadSummary, now: Date = new Date()): PickerItem {
  const state = t.damaged ? 'blocked' : t.state;
  const agent = agentInfo(t.agent);
  const desc = [agent.name, t.model ?? undefined, t.current ? '$(circle-filled) current' : undefined];
  const detail: string[] = [];
  if (state === 'drift' || state === 'blocked') detail.push(`${state === 'drift' ? '$(warning)' : '$(error)'} ${t.state_reason ?? (t.damaged ? 'damaged log' : state)}`);
  if (t.branch) detail.push(`$(git-branch) ${t.branch}`);
  detail.push(relativeTime(t.last_activity, now));
  const todos = fraction(t.todos);
  detail.push(todos ? `todos ${todos}` : 'no todos');
  const tests = fraction(t.tests);
  detail.push(tests ? `tests ${tests}` : 'tests not run');
  const cost = money(t.cost_usd);
  if (cost) detail.push(cost);
  detail.push(plural(t.session_count, 'session'));
  if (t.archived) detail.push('archived');
  return {
    label: `${stateIcon(state, t.archived)} ${t.title || 'Untitled'}`,
    description: desc.filter(Boolean).join(' · '),
    detail: detail.join(' · '),
    thread: t,
    buttons: rowButtons(t),
  };
}

export const LOAD_MORE_LABEL = '$(ellipsis) Load more…';

/** All rows for the threads loaded so far, plus "Load more…" when the server has another page. */
export function pickerItems(threads: ThreadSummary[], nextCursor: string | null, now: Date = new Date()): PickerItem[] {
  const items = newestFirst(threads).map((t) => threadItem(t, now));
  if (nextCursor) items.push({ label: LOAD_MORE_LABEL, alwaysShow: true, loadMore: true });
  return items;
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
  onDidTriggerItemButton(cb: (e: { item: T; button: ItemButton }) => void): { dispose(): void };
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

export interface Picked {
  thread: ThreadSummary;
  /** The row button pressed; Enter means the picker's default action. */
  action: ThreadAction | 'accept';
}

/**
 * Shows the picker and lists lazily: the first page is requested only when the picker opens,
 * further pages when the user accepts "Load more…". Resolves to the chosen thread and action.
 */
export function pickThread(deps: PickThreadDeps, title = 'Session Keeper: Agent Sessions', placeholder = 'Enter resumes; the buttons fork, show details or archive'): Promise<Picked | undefined> {
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
      cursor = page.next_cursor ?? null;
      qp.items = pickerItems(threads, cursor, now());
      qp.placeholder = threads.length ? placeholder : 'No agent sessions recorded for this workspace';
    } catch (err) {
      qp.placeholder = 'Could not list sessions (see the log)';
      deps.onError(err);
    } finally {
      qp.busy = false;
    }
  };

  return new Promise((resolve) => {
    let done = false;
    const finish = (p: Picked | undefined): void => {
      if (done) return;
      done = true;
      resolve(p);
      qp.dispose();
    };
    qp.onDidAccept(() => {
      const sel = qp.selectedItems[0];
      if (!sel) return;
      if (sel.loadMore) { void load(); return; }
      if (sel.thread) finish({ thread: sel.thread, action: 'accept' });
    });
    qp.onDidTriggerItemButton((e) => {
      if (e.item.thread) finish({ thread: e.item.thread, action: e.button.action });
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
    void load();
  });
}
