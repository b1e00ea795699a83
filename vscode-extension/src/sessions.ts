/**
 * The threads the Sessions view and the status bar show: this workspace's (or every workspace's)
 * threads from every agent, newest first, with the current one patched live from its Status.
 * Refreshed when the server says the listing changed (session/didChangeThreads), debounced; never
 * polled. Pure over a Requester and an injected timer, so it is unit-tested.
 */

import { errorMessage, type Logger } from './errors';
import type { ListParams, ListResult, Requester, ShowResult, Status, ThreadSummary } from './protocol';
import type { ServerPhase } from './ui/statusBar';

export const PAGE = 100;

export interface Timer {
  schedule(fn: () => void, ms: number): { cancel(): void };
}

export const realTimer: Timer = {
  schedule: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

export interface SessionsDeps {
  request: Requester;
  workspace(): string | undefined;
  onChange(): void;
  log: Logger;
  timer?: Timer;
}

export class SessionsModel {
  private list: ThreadSummary[] = [];
  private cursor: string | null = null;
  private loaded = false;
  private error: string | undefined;
  private phase: ServerPhase = 'starting';
  private current: Status | null = null;
  private pending: { cancel(): void } | undefined;
  private shows = new Map<string, Promise<ShowResult>>();
  private generation = 0;
  allWorkspaces = false;

  constructor(private readonly deps: SessionsDeps) {}

  /** The threads, newest first; the current one as its live Status says. */
  threads(): ThreadSummary[] {
    if (this.phase === 'failed') return []; // the view's welcome says why
    const id = this.current?.thread_id;
    return this.list.map((t) => (this.current && t.thread_id === id ? patched(t, this.current) : t.current ? { ...t, current: false } : t));
  }

  hasMore(): boolean {
    return this.cursor !== null;
  }

  /** "3", or "100+" when more pages exist; undefined before the first listing. */
  count(): string | undefined {
    if (!this.loaded) return undefined;
    return `${this.list.length}${this.cursor ? '+' : ''}`;
  }

  /** Why there are no thread rows to show (the view's welcome content covers "none recorded"). */
  notice(): { text: string; icon: string; command?: { command: string; title: string } } | undefined {
    if (this.phase === 'failed') return undefined; // the view's welcome says why
    if (this.error) return { text: `Could not list sessions: ${this.error}`, icon: 'error', command: { command: 'sessionKeeper.refreshSessions', title: 'Retry' } };
    if (!this.loaded) return { text: 'Loading sessions…', icon: 'loading~spin' };
    return undefined;
  }

  /** True once listed and empty (the view then shows its welcome content). */
  isEmpty(): boolean {
    return this.loaded && !this.error && this.list.length === 0;
  }

  setPhase(phase: ServerPhase): void {
    this.phase = phase;
    if (phase === 'running') this.refreshSoon(0);
    this.deps.onChange();
  }

  /** The current session changed: patch its row; a thread not listed yet means a re-list. */
  setStatus(status: Status | null): void {
    this.current = status;
    if (status && this.loaded && !this.list.some((t) => t.thread_id === status.thread_id)) this.refreshSoon();
    this.shows.delete(status?.thread_id ?? '');
    this.deps.onChange();
  }

  setAllWorkspaces(all: boolean): void {
    this.allWorkspaces = all;
    void this.refresh();
  }

  /** Re-list after `ms` (bursts of notifications become one request). */
  refreshSoon(ms = 250): void {
    this.pending?.cancel();
    this.pending = (this.deps.timer ?? realTimer).schedule(() => {
      this.pending = undefined;
      void this.refresh();
    }, ms);
  }

  private params(cursor?: string): ListParams {
    const ws = this.deps.workspace();
    return {
      limit: PAGE,
      ...(this.allWorkspaces ? { all_workspaces: true } : ws ? { workspace: ws } : {}),
      ...(cursor ? { cursor } : {}),
    };
  }

  /** Lists the first page again. */
  async refresh(): Promise<void> {
    if (this.phase !== 'running') return;
    const generation = ++this.generation;
    let page: ListResult;
    try {
      page = await this.deps.request('session/list', this.params());
    } catch (err) {
      if (generation !== this.generation) return;
      this.error = errorMessage(err);
      this.deps.log.error(`session/list: ${this.error}`);
      this.deps.onChange();
      return;
    }
    if (generation !== this.generation) return; // a newer listing is on its way
    this.list = page.threads;
    this.cursor = page.next_cursor ?? null;
    this.loaded = true;
    this.error = undefined;
    this.shows.clear();
    this.deps.onChange();
  }

  /** Appends the next page. */
  async loadMore(): Promise<void> {
    if (!this.cursor) return;
    const generation = this.generation;
    const page = await this.deps.request('session/list', this.params(this.cursor));
    if (generation !== this.generation) return; // listed again meanwhile: its own cursor stands
    const known = new Set(this.list.map((t) => t.thread_id));
    this.list = [...this.list, ...page.threads.filter((t) => !known.has(t.thread_id))];
    this.cursor = page.next_cursor ?? null;
    this.deps.onChange();
  }

  /** session/show of a thread, fetched once per listing. */
  show(threadId: string): Promise<ShowResult> {
    let shown = this.shows.get(threadId);
    if (!shown) {
      shown = this.deps.request('session/show', { thread_id: threadId });
      shown.catch(() => this.shows.delete(threadId));
      this.shows.set(threadId, shown);
    }
    return shown;
  }

  /** The listed thread with this id, if any. */
  find(threadId: string): ThreadSummary | undefined {
    return this.threads().find((t) => t.thread_id === threadId);
  }
}

/** A listed thread as the live Status of its open session says it is now. */
export function patched(t: ThreadSummary, s: Status): ThreadSummary {
  return {
    ...t, current: true, title: s.title ?? t.title, branch: s.branch ?? t.branch, todos: s.todos,
    tests: s.tests, cost_usd: s.cost_usd, state: s.state ?? t.state, state_reason: s.state ? s.state_reason : t.state_reason,
  };
}
