import assert from 'node:assert/strict';
import { test } from 'node:test';
import { archiveWithUndo } from '../../src/archive';
import { logger, requester } from './fixtures';

function deps(answer: string | undefined) {
  const r = requester({ 'session/archive': (p) => ({ ...p, archived: true }), 'session/unarchive': (p) => ({ ...p, archived: false }) });
  const notes: { message: string; labels: string[] }[] = [];
  const log = logger();
  return { r, notes, log, deps: { request: r.request, log, notify: async (message: string, labels: string[]) => { notes.push({ message, labels }); return labels.length ? answer : undefined; } } };
}

test('archive acts at once and offers Undo, which unarchives the thread', async () => {
  const d = deps('Undo');
  assert.equal(await archiveWithUndo(d.deps, { thread_id: 't1', title: 'Fix' }), 'undone');
  assert.deepEqual(d.r.calls.map((c) => c.method), ['session/archive', 'session/unarchive']);
  assert.deepEqual(d.notes[0], { message: 'Archived “Fix”: it no longer shows in the list.', labels: ['Undo'] });
  assert.match(d.notes[1]?.message ?? '', /Restored “Fix”/);
  assert.deepEqual(d.log.lines, ['info Archived “Fix” (t1)', 'info Undo: unarchived “Fix” (t1)']);
});

test('dismissing the notification keeps the thread archived', async () => {
  const d = deps(undefined);
  assert.equal(await archiveWithUndo(d.deps, { thread_id: 't1' }), 'archived');
  assert.deepEqual(d.r.calls.map((c) => c.method), ['session/archive']);
});
