/** Canned protocol values shared by the unit tests. */
import type { Report, Status, ThreadSummary } from '../../src/protocol';

export const NOW = new Date('2026-05-01T12:00:00Z');

export function status(over: Partial<Status> = {}): Status {
  return {
    thread_id: '11111111-2222-4333-8444-555555555555', session_id: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
    title: 'Fix payment rounding', branch: 'fix/payment', verdict: 'ok', drift: false,
    todos: { done: 3, total: 5 }, tests: { passed: 7, total: 9 }, cost_usd: 1.234, ...over,
  };
}

export function thread(over: Partial<ThreadSummary> = {}): ThreadSummary {
  return {
    thread_id: '11111111-2222-4333-8444-555555555555', title: 'Fix payment rounding', cwd: '/repo-a',
    branch: 'fix/payment', created_at: '2026-04-30T09:00:00Z', last_activity: '2026-05-01T10:00:00Z',
    archived: false, session_count: 2, event_count: 120, damaged: false,
    todos: { done: 3, total: 5 }, tests: { passed: 7, total: 9 }, state: 'ok', ...over,
  };
}

export function report(over: Partial<Report> = {}): Report {
  return {
    verdict: 'ok', thread_id: '11111111-2222-4333-8444-555555555555', restored_to_seq: 42,
    differences: [], invalidated: [], in_doubt_operations: [], rerun_verifier: false,
    quarantined: [], damaged: [], hook_failures: [], choices: [],
    todos: { done: 3, total: 5 }, verifier: { passed: 7, total: 9 }, ...over,
  };
}

export const DRIFT: Report = report({
  verdict: 'drift',
  differences: [
    { kind: 'branch', recorded: 'fix/payment', current: 'main', detail: null },
    { kind: 'head', recorded: 'abc1234', current: 'def5678', detail: '3 commits ahead' },
    { kind: 'file_changed', recorded: 'sha256:aa', current: 'sha256:bb', detail: 'src/pay.py' },
  ],
  choices: ['continue', 'switch_back', 'fork', 'cancel'],
});
