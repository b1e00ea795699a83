import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ListResult } from '../../src/protocol';
import { LOAD_MORE_LABEL, pickerItems, pickThread, threadItem, type ItemButton, type PickerItem, type QuickPickLike } from '../../src/ui/picker';
import { NOW, thread } from './fixtures';

test('a picker row names the agent and model, marks the current thread, and shows branch, age and progress', () => {
  const i = threadItem(thread({ agent: 'codex', model: 'gpt-5', current: true, cost_usd: 0.42 }), NOW);
  assert.equal(i.label, '$(pass) Fix payment rounding');
  assert.equal(i.description, 'Codex · gpt-5 · $(circle-filled) current');
  assert.equal(i.detail, '$(git-branch) fix/payment · 2 h ago · todos 3/5 · tests 7/9 · $0.42 · 2 sessions');
  assert.equal(threadItem(thread({ agent: 'claude' }), NOW).description, 'Claude Code');
  assert.equal(threadItem(thread({ agent: 'hermes' }), NOW).description, 'Hermes Agent');
  assert.equal(threadItem(thread({ agent: 'native' }), NOW).description, 'Session Keeper');
});

test('a drifted row says what drifted, not just "drift"', () => {
  const i = threadItem(thread({ state: 'drift', state_reason: 'branch fix/payment → main' }), NOW);
  assert.match(i.label, /^\$\(warning\) /);
  assert.match(i.detail ?? '', /^\$\(warning\) branch fix\/payment → main · /);
  const damaged = threadItem(thread({ damaged: true, state: null }), NOW);
  assert.match(damaged.label, /^\$\(error\)/);
  assert.match(damaged.detail ?? '', /damaged log/);
  assert.match(threadItem(thread({ archived: true }), NOW).label, /^\$\(archive\)/);
});

test('each row acts through its buttons: Resume, Fork, Details, Archive (Unarchive when archived)', () => {
  assert.deepEqual(threadItem(thread(), NOW).buttons?.map((b) => b.action), ['resume', 'fork', 'details', 'archive']);
  assert.deepEqual(threadItem(thread({ archived: true }), NOW).buttons?.map((b) => b.action), ['resume', 'fork', 'details', 'unarchive']);
});

test('picker items are newest first and end with Load more when there is a next page', () => {
  const items = pickerItems([
    thread({ thread_id: 'a', title: 'old', last_activity: '2026-04-01T00:00:00Z' }),
    thread({ thread_id: 'b', title: 'new', last_activity: '2026-05-01T11:59:00Z' }),
  ], 'c2', NOW);
  assert.deepEqual(items.map((i) => i.label), ['$(pass) new', '$(pass) old', LOAD_MORE_LABEL]);
  assert.equal(items[2]?.loadMore, true);
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
  private buttonCb: (e: { item: PickerItem; button: ItemButton }) => void = () => undefined;
  onDidAccept(cb: () => void) { this.accept = cb; return { dispose() {} }; }
  onDidHide(cb: () => void) { this.hideCb = cb; return { dispose() {} }; }
  onDidTriggerItemButton(cb: (e: { item: PickerItem; button: ItemButton }) => void) { this.buttonCb = cb; return { dispose() {} }; }
  show() { this.shown = true; }
  hide() { this.hideCb(); }
  dispose() { this.disposed = true; }
  choose(pred: (i: PickerItem) => boolean) { this.selectedItems = this.items.filter(pred).slice(0, 1); this.accept(); }
  press(pred: (i: PickerItem) => boolean, action: string) {
    const item = this.items.find(pred)!;
    this.buttonCb({ item, button: item.buttons!.find((b) => b.action === action)! });
  }
}

const tick = () => new Promise((r) => setImmediate(r));

test('pickThread lists lazily, pages with Load more, and Enter picks a thread', async () => {
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
  qp.choose((i) => i.loadMore === true);
  await tick();
  assert.deepEqual(calls, [undefined, 'p2']);
  assert.deepEqual(qp.items.map((i) => i.thread?.thread_id), ['t1', 't2']);
  qp.choose((i) => i.thread?.thread_id === 't2');
  const p = await picked;
  assert.deepEqual([p?.thread.thread_id, p?.action], ['t2', 'accept']);
  assert.equal(qp.disposed, true);
});

test('a row button resolves with its action, without a second picker', async () => {
  const qp = new FakeQuickPick();
  const picked = pickThread({ createQuickPick: () => qp, list: async () => ({ threads: [thread({ thread_id: 't1' })], next_cursor: null }), onError: assert.fail });
  await tick();
  qp.press((i) => i.thread?.thread_id === 't1', 'archive');
  const p = await picked;
  assert.deepEqual([p?.thread.thread_id, p?.action], ['t1', 'archive']);
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
