import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProgressValue } from '../../src/protocol';
import { reindexFlow, type ReindexDeps } from '../../src/reindex';
import { logger } from './fixtures';

/** A server whose reindex reports `values` to the request's token, then answers (or fails when cancelled). */
function fixture(values: ProgressValue[], opts: { cancelAt?: number; damaged?: number } = {}) {
  const handlers = new Map<string, (v: ProgressValue) => void>();
  const reports: { message: string; increment: number }[] = [];
  const notes: string[] = [];
  const cancelled: string[] = [];
  const requests: { method: string; params: any }[] = [];
  const disposed: string[] = [];
  let cancelListener: (() => void) | undefined;
  let progressShown = 0;
  const log = logger();
  const deps: ReindexDeps = {
    request: (async (method: string, params: any) => {
      requests.push({ method, params });
      const send = handlers.get(params.workDoneToken);
      for (const [n, v] of values.entries()) {
        if (n === opts.cancelAt) {
          cancelListener?.();
          throw Object.assign(new Error('reindex cancelled; the previous index is kept'), { code: -32800 });
        }
        send?.(v);
      }
      return { threads: 3, sessions: 5, damaged: opts.damaged ?? 0 };
    }) as ReindexDeps['request'],
    onProgress: async (token, handler) => {
      handlers.set(token, handler);
      return { dispose: () => { disposed.push(token); handlers.delete(token); } };
    },
    cancel: (token) => cancelled.push(token),
    withProgress: (_title, task) => {
      progressShown++;
      return task((message, increment) => reports.push({ message, increment }), (listener) => { cancelListener = listener; });
    },
    log,
    notify: (severity, message) => notes.push(`${severity} ${message}`),
  };
  return { deps, reports, notes, cancelled, requests, disposed, log, shown: () => progressShown };
}

const RUN: ProgressValue[] = [
  { kind: 'begin', message: 'scanning rollouts', percentage: 0 },
  { kind: 'report', message: '1/4 rollouts', percentage: 25 },
  { kind: 'report', message: '4/4 rollouts', percentage: 100 },
  { kind: 'end', message: '3 threads, 5 sessions' },
];

test('reindex shows one notification that the server moves through its own token', async () => {
  const f = fixture(RUN);
  assert.deepEqual(await reindexFlow(f.deps), { threads: 3, sessions: 5, damaged: 0 });
  assert.equal(f.shown(), 1);
  const [req] = f.requests;
  assert.equal(req?.method, 'session/reindex');
  assert.match(String(req?.params.workDoneToken), /^sessionkeeper-reindex-client-/);
  assert.deepEqual(f.reports, [
    { message: 'scanning rollouts', increment: 0 },
    { message: '1/4 rollouts', increment: 25 },
    { message: '4/4 rollouts', increment: 75 },
  ]);
  assert.deepEqual(f.disposed, [req?.params.workDoneToken]);
  assert.deepEqual(f.notes, ['info Session Keeper: indexed 3 threads and 5 sessions.']);
  assert.deepEqual(f.log.lines, ['info Reindexed: 3 threads, 5 sessions']);
});

test('cancel in the notification cancels the server work of that token and keeps the old index', async () => {
  const f = fixture(RUN, { cancelAt: 2 });
  assert.equal(await reindexFlow(f.deps), undefined);
  const token = f.requests[0]?.params.workDoneToken;
  assert.deepEqual(f.cancelled, [token]);
  assert.deepEqual(f.disposed, [token]);
  assert.deepEqual(f.notes, []);
  assert.deepEqual(f.log.lines, ['info Reindex cancelled: the previous index is kept']);
});

test('a failure that is not a cancel reaches the caller; damaged files make the notice a warning', async () => {
  const failing = fixture(RUN);
  failing.deps.request = (async () => { throw new Error('store damaged'); }) as ReindexDeps['request'];
  await assert.rejects(reindexFlow(failing.deps), /store damaged/);
  const damaged = fixture(RUN, { damaged: 2 });
  await reindexFlow(damaged.deps);
  assert.deepEqual(damaged.notes, ['warning Session Keeper: indexed 3 threads and 5 sessions, 2 damaged.']);
});

test('two reindexes never share a token', async () => {
  const f = fixture(RUN);
  await reindexFlow(f.deps);
  await reindexFlow(f.deps);
  const [a, b] = f.requests.map((r) => r.params.workDoneToken);
  assert.notEqual(a, b);
});
