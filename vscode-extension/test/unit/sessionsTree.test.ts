import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decorationOf, describeThread, entryRow, SessionsTree, threadRow, threadTooltip, threadUri, type SessionsNode } from '../../src/ui/sessionsTree';
import { entry, NOW, session, shown, thread } from './fixtures';

test('a row shows title; branch, age, todos, tests and cost inline', () => {
  const r = threadRow(thread({ cost_usd: 0.42 }), NOW);
  assert.equal(r.label, 'Fix payment rounding');
  assert.equal(r.description, 'fix/payment · 2 h ago · todos 3/5 · tests 7/9 · $0.42');
  assert.equal(r.contextValue, 'thread.active');
  assert.equal(r.collapsible, 'collapsed');
});

test('the drift reason is inline and comes first; the current thread is marked', () => {
  const t = thread({ state: 'drift', state_reason: 'branch fix/payment → main', current: true });
  assert.equal(describeThread(t, NOW), 'current · ⚠ branch fix/payment → main · 2 h ago · todos 3/5 · tests 7/9');
  assert.equal(describeThread(thread({ state: 'drift', state_reason: '2 files changed outside' }), NOW), '⚠ 2 files changed outside · fix/payment · 2 h ago · todos 3/5 · tests 7/9');
  assert.equal(threadRow(t, NOW).contextValue, 'thread.active.current');
  assert.equal(threadRow(thread({ archived: true }), NOW).contextValue, 'thread.archived');
  assert.match(describeThread(thread({ damaged: true }), NOW), /^✕ log damaged/);
});

test('each agent has its own icon and name; an unknown agent still shows', () => {
  assert.deepEqual(threadRow(thread({ agent: 'native' }), NOW).icon, { media: 'agent-native.svg' });
  assert.deepEqual(threadRow(thread({ agent: 'codex' }), NOW).icon, { media: 'agent-codex.svg' });
  assert.deepEqual(threadRow(thread({ agent: 'claude' }), NOW).icon, { media: 'agent-claude.svg' });
  assert.deepEqual(threadRow(thread({ agent: 'hermes' }), NOW).icon, { media: 'agent-hermes.svg' });
  assert.deepEqual(threadRow(thread({ agent: 'openclaw' }), NOW).icon, { media: 'agent-openclaw.svg' });
  assert.match(threadTooltip(thread({ agent: 'openclaw' }), NOW), /— OpenClaw/);
  assert.deepEqual(threadRow(thread({ agent: 'gemini' }), NOW).icon, { media: 'agent-other.svg' });
  assert.match(threadTooltip(thread({ agent: 'claude', model: 'opus' }), NOW), /^\*\*Fix payment rounding\*\* — Claude Code · opus/);
  assert.match(threadTooltip(thread({ agent: 'gemini' }), NOW), /— Gemini/);
});

test("an agent thread's tooltip says where its baseline came from; our own threads say nothing of it", () => {
  assert.match(threadTooltip(thread({ agent: 'codex', baseline: 'hook' }), NOW), /\n\nBaseline exact — recorded by Session Keeper's hook/);
  assert.match(threadTooltip(thread({ agent: 'claude', baseline: 'log' }), NOW), /\n\nBaseline reconstructed from Claude Code's own log/);
  assert.doesNotMatch(threadTooltip(thread({ agent: 'native', baseline: null }), NOW), /Baseline/);
});

test('in the all-workspaces view a row names its folder', () => {
  assert.equal(threadRow(thread({ cwd: '/work/repo-b' }), NOW, true).description, 'repo-b · fix/payment · 2 h ago · todos 3/5 · tests 7/9');
});

test('decorations mark the current thread and colour drift and blocked rows', () => {
  assert.deepEqual(decorationOf(threadUri(thread({ current: true, state: 'drift' }))), { badge: '●', tooltip: 'Current session', color: 'list.warningForeground' });
  assert.deepEqual(decorationOf(threadUri(thread({ state: 'blocked' }))), { badge: '✕', tooltip: 'blocked', color: 'list.errorForeground' });
  assert.equal(decorationOf(threadUri(thread({ state: 'ok' }))), undefined);
});

test('a file change in the timeline opens its diff when clicked and offers Rewind in its menu', () => {
  const r = entryRow(thread(), entry({ seq: 12, type: 'file_change', summary: 'pay.py by agent', path: 'pay.py', author: 'agent' }));
  assert.equal(r.contextValue, 'entry.file');
  assert.deepEqual(r.command, { command: 'sessionKeeper.openDiff', title: 'Open Diff', arguments: [{ thread_id: thread().thread_id, seq: 12, path: 'pay.py' }] });
  assert.equal(r.description, '#12 · 10:00');
  assert.equal(entryRow(thread(), entry()).command, undefined);
});

test('the tree: threads, then Sessions and Timeline under each, newest first, loaded once', async () => {
  let shows = 0;
  const t = thread();
  const tree = new SessionsTree({
    threads: () => [t], hasMore: () => true, notice: () => undefined, allWorkspaces: () => false, now: () => NOW,
    show: async () => { shows++; return shown({ sessions: [session({ session_id: 'old' }), session({ session_id: 'new', source: 'resume' })], timeline: [entry({ seq: 1 }), entry({ seq: 2 })] }); },
  });
  const roots = tree.roots();
  assert.deepEqual(roots.map((r) => r.kind), ['thread', 'more']);
  const groups = await tree.children(roots[0]!);
  assert.deepEqual(groups.map((g) => tree.item(g).label), ['Sessions', 'Timeline']);
  const sessions = await tree.children(groups[0]!);
  assert.deepEqual(sessions.map((s) => (s as Extract<SessionsNode, { kind: 'session' }>).session.session_id), ['new', 'old']);
  assert.match(tree.item(sessions[0]!).label, /^resumed /);
  const entries = await tree.children(groups[1]!);
  assert.deepEqual(entries.map((e) => (e as Extract<SessionsNode, { kind: 'entry' }>).entry.seq), [2, 1]);
  assert.equal(shows, 2);
});

test('the tree shows a notice row instead of threads while loading or failing', async () => {
  const tree = new SessionsTree({ threads: () => [thread()], hasMore: () => false, notice: () => ({ text: 'Loading sessions…', icon: 'loading~spin' }), allWorkspaces: () => false, show: async () => shown() });
  assert.deepEqual(tree.roots().map((r) => tree.item(r).label), ['Loading sessions…']);
  const failing = new SessionsTree({ threads: () => [thread()], hasMore: () => false, notice: () => undefined, allWorkspaces: () => false, show: async () => { throw new Error('gone'); } });
  const [group] = await failing.children(failing.roots()[0]!);
  const rows = await failing.children(group!);
  assert.equal(failing.item(rows[0]!).label, 'Could not load: gone');
});
