import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ListResult } from '../../src/protocol';
import { actionItems, LOAD_MORE_LABEL, pickerItems, pickThread, threadItem, type PickerItem, type QuickPickLike } from '../../src/ui/picker';
import { NOW, thread } from './fixtures';

test('picker item shows state icon, title, branch, last activity and progress', () => {
  const i = threadItem(thread(), NOW);
  assert.equal(i.label, '$(pass) Fix payment rounding');
  assert.equal(i.description, '$(git-branch) fix/payment · 2 h ago');
  assert.equal(i.detail, 'todos 3/5 · tests 7/9 · 2 sessions');
});

test('picker item icons follow state: drift, blocked, damaged, archived', () => {
  assert.match(threadItem(thread({ state: 'drift' }), NOW).label, /^\$\(warning\)/);
  assert.match(threadItem(thread({ state: 'blocked' }), NOW).label, /^\$\(error\)/);
  const damaged = threadItem(thread({ damaged: true }), NOW);
  assert.match(damaged.label, /^\$\(error\)/);
  assert.match(damaged.detail ?? '', /damaged log/);
  assert.match(threadItem(thread({ archived: true }), NOW).label, /^\$\(archive\)/);
});

test('picker items are newest first and end with Load more when there is a next page', () => {
  const items = pickerItems([
    thread({ thread_id: 'a', title: 'old', last_activity: '2026-04-01T00:00:00Z' }),
    thread({ thread_id: 'b', title: 'new', last_activity: '2026-05-01T11:59:00Z' }),
  ], 'c2', NOW);
  assert.deepEqual(items.map((i) => i.label), ['$(pass) new', '$(pass) old', LOAD_MORE_LABEL]);
  assert.equal(items[2]?.loadMore, true);
  assert.equal(pickerItems([thread()], null, NOW).length, 1);
});

test('missing todos and tests read as such, single session is singular', () => {
  const i = threadItem(thread({ todos: null, tests: null, session_count: 1 }), NOW);
  assert.equal(i.detail, 'no todos · tests not run · 1 session');
});

test('actions offer resume, fork, archive (or unarchive) and details', () => {
  assert.deepEqual(actionItems(thread()).map((a) => a.action), ['resume', 'fork', 'archive', 'details']);
  assert.deepEqual(actionItems(thread({ archived: true })).map((a) => a.action), ['resume', 'fork', 'unarchive', 'details']);
});

class FakeQuickPick implements QuickPickLike<PickerItem> {
  items: readonly PickerItem[] = [];
  busy = false;
  title: string | undefined;
  placeholder: string | undefined;
  matchOnDescription = false;
  matchOnDetail = false;
  keepScrollPosition = false;
  selectedItems: readonly PickerItem[] = [];
  shown = false;
  disposed = false;
  private accept: () => void = () => undefined;
  private hideCb: () => void = () => undefined;
  onDidAccept(cb: () => void) { this.accept = cb; return { dispose() {} }; }
  onDidHide(cb: () => void) { this.hideCb = cb; return { dispose() {} }; }
  show() { this.shown = true; }
  hide() { this.hideCb(); }
  dispose() { this.disposed = true; }
  choose(pred: (i: PickerItem) => boolean) { this.selectedItems = this.items.filter(pred).slice(0, 1); this.accept(); }
}

const tick = () => new Promise((r) => setImmediate(r));

test('pickThread lists lazily, pages with Load more, and resolves the chosen thread', async () => {
  const qp = new FakeQuickPick();
  const calls: (string | undefined)[] = [];
  const pages: Record<string, ListResult> = {
    first: { threads: [thread({ thread_id: 't1', title: 'one' })], next_cursor: 'p2' },
    p2: { threads: [thread({ thread_id: 't2', title: 'two', last_activity: '2026-04-01T00:00:00Z' })], next_cursor: null },
  };
  const picked = pickThread({ createQuickPick: () => qp, list: async (c) => { calls.push(c); return pages[c ?? 'first']!; }, onError: assert.fail, now: () => NOW });
  assert.equal(qp.shown, true);
  await tick();
  assert.deepEqual(calls, [undefined]);
  assert.equal(qp.items.length, 2);
  qp.choose((i) => i.loadMore === true);
  await tick();
  assert.deepEqual(calls, [undefined, 'p2']);
  assert.deepEqual(qp.items.map((i) => i.thread?.thread_id), ['t1', 't2']);
  qp.choose((i) => i.thread?.thread_id === 't2');
  assert.equal((await picked)?.thread_id, 't2');
  assert.equal(qp.disposed, true);
});

test('pickThread resolves undefined when hidden and reports list errors', async () => {
  const qp = new FakeQuickPick();
  const errors: unknown[] = [];
  const picked = pickThread({ createQuickPick: () => qp, list: async () => { throw new Error('boom'); }, onError: (e) => errors.push(e) });
  await tick();
  assert.equal(errors.length, 1);
  assert.match(qp.placeholder ?? '', /Could not list/);
  qp.hide();
  assert.equal(await picked, undefined);
});
