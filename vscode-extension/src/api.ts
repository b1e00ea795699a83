/**
 * The API returned from activate(): agent extensions call these instead of speaking LSP.
 * Pure over a `Requester`; the workspace and durability come from injected getters.
 */

import type { Decision, Durability, RecordParams, Requester, ResumeResult, StartResult, Status, RecordResult } from './protocol';

export interface StartThreadOptions {
  title?: string;
  /** Defaults to the first workspace folder. */
  workspace?: string;
  permissions?: Record<string, unknown>;
  model?: string;
}

export interface ResumeOptions {
  /** Defaults to the first workspace folder. */
  workspace?: string;
  /** Non-interactive decision for a drifted workspace; without it a drift is returned, not continued. */
  decision?: Extract<Decision, 'continue' | 'fork' | 'switch_back' | 'cancel'>;
}

export interface SessionKeeperApi {
  /** Starts a new thread (and its first session) in the workspace. */
  startThread(options?: StartThreadOptions): Promise<StartResult>;
  /** Appends events to a session; resolves once they reached `durability` (default: the setting). */
  record(sessionId: string, events: Record<string, unknown>[], durability?: Durability): Promise<RecordResult>;
  /**
   * Resumes a thread (the latest of the workspace when `threadId` is undefined). It never continues
   * silently on drift: without `options.decision` a non-ok check is returned as `{report}` only.
   */
  resume(threadId?: string, options?: ResumeOptions): Promise<ResumeResult>;
  /** The current session's status, or null. */
  current(): Promise<Status | null>;
}

export interface ApiDeps {
  request: Requester;
  workspace(): string | undefined;
  durability(): Durability;
}

function need(ws: string | undefined): string {
  if (!ws) throw new Error('Session Keeper: no workspace folder is open and none was given.');
  return ws;
}

/** Builds the extension API. */
export function createApi(deps: ApiDeps): SessionKeeperApi {
  return {
    startThread: (o = {}) => {
      const { workspace, ...rest } = o;
      return deps.request('session/start', { workspace: need(workspace ?? deps.workspace()), ...rest });
    },
    record: async (sessionId, events, durability) => {
      if (!events.length) throw new Error('Session Keeper: record needs at least one event.');
      const batch = events as RecordParams['events'];
      return deps.request('session/record', { session_id: sessionId, events: batch, durability: durability ?? deps.durability() });
    },
    resume: async (threadId, o = {}) => {
      const workspace = need(o.workspace ?? deps.workspace());
      const report = await deps.request(
        'session/checkResume',
        threadId ? { thread_id: threadId, workspace } : { latest: true, workspace },
      );
      const id = report.thread_id || threadId;
      if (!id) throw new Error('Session Keeper: no thread to resume in this workspace.');
      if (report.verdict !== 'ok' && !o.decision) return { report, thread_id: id, session_id: null };
      if (report.verdict === 'blocked') return { report, thread_id: id, session_id: null };
      return deps.request('session/resume', { thread_id: id, workspace, decision: o.decision ?? 'continue' });
    },
    current: () => deps.request('session/current', {}),
  };
}
