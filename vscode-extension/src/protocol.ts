/**
 * TypeScript shapes of the Session Keeper LSP protocol (server/sessionkeeper/lsp/PROTOCOL.md).
 * Field names are snake_case exactly as on the wire. Shapes the document leaves open are typed
 * loosely (`unknown` / index signatures) and rendered defensively.
 */

export const Method = {
  list: 'session/list',
  show: 'session/show',
  start: 'session/start',
  record: 'session/record',
  checkResume: 'session/checkResume',
  resume: 'session/resume',
  fork: 'session/fork',
  archive: 'session/archive',
  unarchive: 'session/unarchive',
  clear: 'session/clear',
  compact: 'session/compact',
  reindex: 'session/reindex',
  current: 'session/current',
} as const;

export const Notification = {
  didChange: 'session/didChange',
} as const;

/** JSON-RPC error codes the server uses besides the standard ones. */
export const ErrorCode = {
  invalidParams: -32602,
  invalidId: -32010,
  unknownThread: -32011,
  threadBusy: -32012,
  storeDamaged: -32013,
  readOnly: -32014,
} as const;

export type Verdict = 'ok' | 'drift' | 'blocked';
export type Durability = 'none' | 'written' | 'durable';
/** `relocate` and `export` answer a `blocked` verdict (PROTOCOL.md, "as implemented"). */
export type Decision = 'continue' | 'fork' | 'switch_back' | 'cancel' | 'relocate' | 'export';

export interface Progress { done: number; total: number }
export interface TestProgress { passed: number; total: number }

export interface Status {
  thread_id: string;
  session_id: string;
  title: string;
  branch: string | null;
  verdict: Verdict | null;
  drift: boolean;
  todos: Progress;
  tests: TestProgress | null;
  cost_usd: number;
}

export interface ThreadSummary {
  thread_id: string;
  title: string;
  cwd: string;
  branch: string | null;
  created_at: string;
  last_activity: string;
  archived: boolean;
  session_count: number;
  event_count: number;
  damaged: boolean;
  todos: Progress | null;
  tests: TestProgress | null;
  state: Verdict | null;
  cost_usd?: number | null;
}

/** `{session_id, started_at, last_activity, source, resumed_from, forked_from, branch, last_seq, …}`. */
export interface SessionSummary {
  session_id: string;
  [key: string]: unknown;
}

/** `{seq, ts, type, session_id, summary}`; unknown extra fields are rendered generically. */
export interface TimelineEntry {
  seq?: number;
  ts?: string;
  type?: string;
  summary?: string;
  [key: string]: unknown;
}

export interface Difference { kind: string; recorded: unknown; current: unknown; detail?: string | null }
export interface Invalidation { subsystem: string; reason: string }
export interface InDoubtOperation { operation_id: string; tool: string; seq: number }

export interface Report {
  verdict: Verdict;
  thread_id: string;
  restored_to_seq: number | null;
  differences: Difference[];
  invalidated: Invalidation[];
  in_doubt_operations: InDoubtOperation[];
  rerun_verifier: boolean;
  quarantined: { session_id: string; path: string; bytes: number }[];
  damaged: { session_id: string; line: number; reason: string }[];
  hook_failures: { hook: string; source: string; error: string }[];
  choices: string[];
  todos?: unknown;
  verifier?: unknown;
  cost?: unknown;
  permissions?: unknown;
  model?: unknown;
  attribution?: unknown;
  /** The thread's title (the real server adds it). */
  title?: string | null;
  /** Set by the server on `switch_back`: the git command it showed (never ran). */
  switch_back?: string | null;
  /** Set by the server on `export`: where the thread was exported. */
  export_path?: string | null;
  /** Where the recorded repository was found again when the workspace is missing. */
  relocate_to?: string | null;
}

export interface ListParams { workspace?: string; all?: boolean; cursor?: string; limit?: number }
export interface ListResult { threads: ThreadSummary[]; next_cursor: string | null }
export interface ShowResult {
  thread: ThreadSummary;
  sessions: SessionSummary[];
  /** The last 200 entries, in order; `timeline_total` counts them all. */
  timeline: TimelineEntry[];
  timeline_total?: number;
  damaged?: { session_id: string; line: number; kind?: string; reason: string }[];
}
export interface StartParams { workspace: string; title?: string; permissions?: unknown; model?: unknown }
export interface StartResult { thread_id: string; session_id: string }
export interface RecordParams { session_id: string; events: unknown[]; durability?: Durability }
export interface RecordResult { acks: { seq: number; durability: Durability; duplicate?: boolean }[] }
export interface CheckResumeParams { thread_id?: string; latest?: boolean; workspace: string }
export interface ResumeParams { thread_id: string; workspace: string; decision?: Decision }
export interface ResumeResult { report: Report; thread_id: string; session_id: string | null }
export interface ForkParams { thread_id: string; at_seq?: number; workspace?: string }
export interface ArchiveResult { thread_id: string; archived: boolean }
export interface ReindexResult { threads: number; sessions: number; damaged: number }

/** The request surface, method name → [params, result]. */
export interface Requests {
  'session/list': [ListParams, ListResult];
  'session/show': [{ thread_id: string }, ShowResult];
  'session/start': [StartParams, StartResult];
  'session/record': [RecordParams, RecordResult];
  'session/checkResume': [CheckResumeParams, Report];
  'session/resume': [ResumeParams, ResumeResult];
  'session/fork': [ForkParams, StartResult];
  'session/archive': [{ thread_id: string }, ArchiveResult];
  'session/unarchive': [{ thread_id: string }, ArchiveResult];
  'session/reindex': [Record<string, never>, ReindexResult];
  'session/current': [Record<string, never>, Status | null];
}

export type RequestMethod = keyof Requests;

/** Sends one typed request; implemented over the language client, faked in tests. */
export type Requester = <M extends RequestMethod>(method: M, params: Requests[M][0]) => Promise<Requests[M][1]>;
