import assert from 'node:assert/strict';
import { test } from 'node:test';
import { entryArg, threadArg } from '../../src/args';
import { shellQuote } from '../../src/format';
import { entry, thread } from './fixtures';

test('commands take a thread from an id, a summary or a tree row; anything else means "ask"', () => {
  assert.deepEqual(threadArg('t1'), { thread_id: 't1' });
  assert.equal(threadArg(thread())?.thread_id, thread().thread_id);
  assert.equal(threadArg({ kind: 'thread', thread: thread({ thread_id: 't2' }) })?.thread_id, 't2');
  assert.equal(threadArg({ scheme: 'file', path: '/x' }), undefined);
  assert.equal(threadArg(''), undefined);
  assert.equal(threadArg(undefined), undefined);
});

test('timeline commands take an event from a tree row or the details page', () => {
  const fromTree = entryArg({ kind: 'entry', thread: thread({ thread_id: 't' }), entry: entry({ seq: 5, path: 'a.py' }) });
  assert.deepEqual(fromTree, { thread_id: 't', seq: 5, path: 'a.py' });
  assert.deepEqual(entryArg({ thread_id: 't', seq: 3 }), { thread_id: 't', seq: 3 });
  assert.equal(entryArg({ thread_id: 't', seq: '3' }), undefined);
  assert.equal(entryArg('x'), undefined);
});

test('terminal command lines quote what the shell would split or expand', () => {
  assert.equal(['codex', 'resume', 'abc-1'].map(shellQuote).join(' '), 'codex resume abc-1');
  assert.equal(shellQuote("it's $HOME"), `'it'\\''s $HOME'`);
});
