/** Canned protocol values shared by the unit tests (shapes from the generated protocol types). */
import type { Logger } from '../../src/errors';
import type { Difference, Report, Requester, SessionSummary, ShowResult, Status, ThreadSummary, TimelineEntry } from '../../src/protocol';

export const NOW = new Date('2026-05-01T12:00:00Z');
export const THREAD_ID = '11111111-2222-4333-8444-555555555555';

export function status(over: Partial<Status> = {}): Status {
  return {
    thread_id: THREAD_ID, session_id: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', agent: 'native',
    title: 'Fix payment rounding', branch: 'fix/payment', verdict: 'ok', drift: false,
    todos: { done: 3, total: 5 }, tests: { passed: 7, total: 9 }, cost_usd: 1.234,
    state: 'ok', state_reason: null, differences: [], changed_files: [], invalidated: [], workspace: '/repo-a', ...over,
  };
}

export function thread(over: Partial<ThreadSummary> = {}): ThreadSummary {
  return {
    thread_id: THREAD_ID, agent: 'native', title: 'Fix payment rounding', cwd: '/repo-a',
    branch: 'fix/payment', model: null, created_at: '2026-04-30T09:00:00Z', last_activity: '2026-05-01T10:00:00Z',
    archived: false, session_count: 2, event_count: 120, damaged: false, forked_from: null, machine: null, os_user: null,
    todos: { done: 3, total: 5 }, tests: { passed: 7, total: 9 }, cost_usd: null, state: 'ok',
    state_reason: null, current: false, baseline: null, ...over,
  };
}

export function diff(kind: string, recorded: unknown, current: unknown, detail = ''): Difference {
  return { kind, recorded, current, detail };
}

export function report(over: Partial<Report> = {}): Report {
  return {
    verdict: 'ok', thread_id: THREAD_ID, restored_to_seq: 42, workspace: '/repo-a', agent: 'native',
    title: 'Fix payment rounding', differences: [], invalidated: [],
    subsystems: {
      todos: { summary: { done: 3, total: 5 }, headline: '3/5 done' },
      verifier: { summary: { tests: { passed: 7, total: 9 } }, headline: 'tests 7/9 passed' },
      cost: { summary: {}, headline: '$1.2340, 10 in / 20 out tokens' },
    },
    in_doubt_operations: [], duplicate_operations: [], rerun_verifier: false, quarantined: [], damaged: [],
    notes: [], facts: {}, choices: [], switch_back: null, switch_back_worktree: null, relocate_to: null, decision: null, continued: false,
    session_id: null, new_thread_id: null, export_path: null, reset: null, hook_failures: [], hook_context: [],
    ...over,
  };
}

export const DRIFT: Report = report({
  verdict: 'drift',
  differences: [
    diff('branch', 'fix/payment', 'main'),
    diff('head', 'abc1234', 'def5678', '3 commits ahead'),
    diff('file_changed', 'sha256:aa', 'sha256:bb', 'src/pay.py'),
  ],
  choices: ['continue', 'switch_back', 'fork', 'cancel'],
});

export function entry(over: Partial<TimelineEntry> = {}): TimelineEntry {
  return { seq: 1, ts: '2026-05-01T10:00:00.000Z', type: 'todo', session_id: 's1', summary: 'todos 1/3 done', path: null, author: null, ...over };
}

export function session(over: Partial<SessionSummary> = {}): SessionSummary {
  return {
    session_id: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', started_at: '2026-05-01T09:00:00Z', last_activity: null, source: 'startup',
    resumed_from: null, forked_from: null, branch: 'fix/payment', last_seq: 3, event_count: 4, status: 'ok', path: '/store/x.jsonl',
    archived: false, ...over,
  };
}

export function shown(over: Partial<ShowResult> = {}): ShowResult {
  return { thread: thread(), sessions: [session()], timeline: [entry()], timeline_total: 1, damaged: [], ...over };
}

/** A logger that keeps what was logged, by level. */
export function logger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (m: string | Error) => { lines.push(`${level} ${String(m)}`); };
  return { lines, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface Call { method: string; params: unknown }

/** A Requester answering from `handlers` (method → params → result) and recording every call. */
export function requester(handlers: Record<string, (params: any) => unknown>): { request: Requester; calls: Call[] } {
  const calls: Call[] = [];
  const request = (async (method: string, params: unknown) => {
    calls.push({ method, params });
    const h = handlers[method];
    if (!h) throw new Error(`unexpected ${method}`);
    return h(params);
  }) as Requester;
  return { request, calls };
}
