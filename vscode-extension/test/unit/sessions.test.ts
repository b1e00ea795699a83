import assert from 'node:assert/strict';
import { test } from 'node:test';
import { patched, SessionsModel, type Timer } from '../../src/sessions';
import { logger, requester, shown, status, thread } from './fixtures';

/** A timer that runs what was scheduled only when told to. */
function manualTimer(): Timer & { fire(): void; pending: number } {
  let due: (() => void)[] = [];
  return {
    get pending() { return due.length; },
    schedule: (fn) => { due.push(fn); return { cancel: () => { due = due.filter((f) => f !== fn); } }; },
    fire: () => { const now = due; due = []; now.forEach((f) => f()); },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

function model(pages: { threads: ReturnType<typeof thread>[]; next_cursor: string | null }[]) {
  const timer = manualTimer();
  let changes = 0;
  const r = requester({
    'session/list': () => pages.shift() ?? { threads: [], next_cursor: null },
    'session/show': () => shown(),
  });
  const m = new SessionsModel({ request: r.request, workspace: () => '/ws', onChange: () => { changes++; }, log: logger(), timer });
  return { m, timer, calls: r.calls, changes: () => changes };
}

test('nothing is listed until the server runs; then one listing of this workspace, newest first', async () => {
  const { m, timer, calls } = model([{ threads: [thread({ thread_id: 'a' })], next_cursor: null }]);
  assert.equal(m.notice()?.text, 'Loading sessions…');
  assert.equal(m.count(), undefined);
  m.setPhase('running');
  timer.fire();
  await tick();
  assert.deepEqual(calls.map((c) => c.params), [{ limit: 100, workspace: '/ws' }]);
  assert.equal(m.count(), '1');
  assert.equal(m.notice(), undefined);
});

test('a burst of change notifications becomes one listing', async () => {
  const { m, timer, calls } = model([{ threads: [], next_cursor: null }, { threads: [], next_cursor: null }]);
  m.setPhase('running');
  timer.fire();
  await tick();
  for (let i = 0; i < 5; i++) m.refreshSoon();
  assert.equal(timer.pending, 1);
  timer.fire();
  await tick();
  assert.equal(calls.length, 2);
  assert.equal(m.isEmpty(), true);
});

test('the current thread is patched live from its Status: state, reason, progress', async () => {
  const { m, timer } = model([{ threads: [thread({ thread_id: status().thread_id, state: 'ok' })], next_cursor: null }]);
  m.setPhase('running');
  timer.fire();
  await tick();
  m.setStatus(status({ state: 'drift', state_reason: 'branch fix/payment → main', todos: { done: 4, total: 5 } }));
  const [row] = m.threads();
  assert.deepEqual([row?.current, row?.state, row?.state_reason, row?.todos], [true, 'drift', 'branch fix/payment → main', { done: 4, total: 5 }]);
  assert.equal(timer.pending, 0, 'a known thread needs no re-list');
});

test('a current thread that is not listed yet triggers a re-list', async () => {
  const { m, timer, calls } = model([{ threads: [], next_cursor: null }, { threads: [thread({ thread_id: status().thread_id })], next_cursor: null }]);
  m.setPhase('running');
  timer.fire();
  await tick();
  m.setStatus(status());
  timer.fire();
  await tick();
  assert.equal(calls.length, 2);
  assert.equal(m.threads()[0]?.current, true);
});

test('all workspaces lists every folder; more pages are appended once', async () => {
  const { m, timer, calls } = model([
    { threads: [thread({ thread_id: 'a' })], next_cursor: null },
    { threads: [thread({ thread_id: 'a' }), thread({ thread_id: 'b' })], next_cursor: 'c2' },
    { threads: [thread({ thread_id: 'b' }), thread({ thread_id: 'c' })], next_cursor: null },
  ]);
  m.setPhase('running');
  timer.fire();
  await tick();
  m.setAllWorkspaces(true);
  await tick();
  assert.deepEqual(calls[1]?.params, { limit: 100, all_workspaces: true });
  assert.equal(m.count(), '2+');
  await m.loadMore();
  assert.deepEqual(calls[2]?.params, { limit: 100, all_workspaces: true, cursor: 'c2' });
  assert.deepEqual(m.threads().map((t) => t.thread_id), ['a', 'b', 'c']);
  assert.equal(m.hasMore(), false);
});

test('a next page that arrives after the list was listed again is dropped', async () => {
  let release: (page: unknown) => void = () => undefined;
  const pages: unknown[] = [
    { threads: [thread({ thread_id: 'a' })], next_cursor: 'old' },
    new Promise((r) => { release = r; }),
    { threads: [thread({ thread_id: 'n' })], next_cursor: 'new' },
  ];
  const timer = manualTimer();
  const r = requester({ 'session/list': () => pages.shift() });
  const m = new SessionsModel({ request: r.request, workspace: () => '/ws', onChange: () => undefined, log: logger(), timer });
  m.setPhase('running');
  timer.fire();
  await tick();
  const more = m.loadMore();
  await m.refresh();
  release({ threads: [thread({ thread_id: 'b' })], next_cursor: null });
  await more;
  assert.deepEqual(m.threads().map((t) => t.thread_id), ['n']);
  assert.equal(m.hasMore(), true, 'the newer listing keeps its own next page');
});

test('a failed listing is shown as a notice with Retry; with the server down the view is left to its welcome content', async () => {
  const timer = manualTimer();
  const r = requester({ 'session/list': () => { throw new Error('index busy'); } });
  const m = new SessionsModel({ request: r.request, workspace: () => '/ws', onChange: () => undefined, log: logger(), timer });
  m.setPhase('running');
  timer.fire();
  await tick();
  assert.deepEqual(m.notice()?.command?.command, 'sessionKeeper.refreshSessions');
  assert.match(m.notice()?.text ?? '', /Could not list sessions: index busy/);
  m.setPhase('failed');
  assert.equal(m.notice(), undefined, 'the view shows its welcome content instead');
  assert.deepEqual(m.threads(), []);
});

test('show is fetched once per listing', async () => {
  const { m, calls } = model([]);
  await m.show('t');
  await m.show('t');
  assert.equal(calls.filter((c) => c.method === 'session/show').length, 1);
});

test('patched keeps the listed reason when the Status has no live state yet', () => {
  const t = thread({ state: 'drift', state_reason: 'HEAD a → b' });
  assert.equal(patched(t, status({ state: null })).state_reason, 'HEAD a → b');
  assert.equal(patched(t, status({ state: 'ok', state_reason: null })).state_reason, null);
});
