import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blobPath, blobText, openDiff, parseBlobPath, renderRewindPreview, rewindFlow, showChanges, type ContentDeps } from '../../src/content';
import type { FileDiff, RewindResult } from '../../src/protocol';
import { logger, requester } from './fixtures';

const T = '11111111-2222-4333-8444-555555555555';
const D: FileDiff = { path: 'src/pay.py', before: { seq: 3, hash: 'h1', author: 'agent', available: true }, after: { seq: 12, hash: 'h2', author: 'agent', available: true }, unified: '@@', note: null };

function deps(handlers: Record<string, (p: any) => unknown>, modal: (string | undefined)[] = [], notify: (string | undefined)[] = []) {
  const r = requester(handlers);
  const seen: string[] = [];
  const modals = [...modal];
  const notes = [...notify];
  const d: ContentDeps = {
    request: r.request, log: logger(),
    ui: {
      blobUri: (p) => `blob:${p}`, fileUri: (p) => `file:${p}`,
      diff: async (l, rr, t) => { seen.push(`diff ${l} ${rr} ${t}`); },
      changes: async (t, files) => { seen.push(`changes ${t} ${JSON.stringify(files)}`); },
      modal: async (_s, m, detail, labels) => { seen.push(`modal ${m} | ${detail} | ${labels.join(',')}`); return modals.shift(); },
      notify: async (s, m, labels) => { seen.push(`notify ${s} ${m} [${labels.join(',')}]`); return notes.shift(); },
    },
  };
  return { d, calls: r.calls, seen };
}

test('version documents round-trip thread, hash and path; "no file" is empty', async () => {
  assert.deepEqual(parseBlobPath(blobPath(T, 'abc', 'src/a b.py')), { threadId: T, hash: 'abc', path: 'src/a b.py' });
  assert.deepEqual(parseBlobPath(blobPath(T, null, 'x')), { threadId: T, hash: null, path: 'x' });
  const r = requester({ 'session/blob': (p) => ({ hash: p.hash, text: p.hash === 'bin' ? null : 'print(1)\n', size: 9, note: p.hash === 'bin' ? 'binary content' : null }) });
  assert.equal(await blobText(r.request, blobPath(T, 'abc', 'a.py')), 'print(1)\n');
  assert.equal(await blobText(r.request, blobPath(T, null, 'a.py')), '');
  assert.match(await blobText(r.request, blobPath(T, 'bin', 'a.png')), /no text to show — binary content/);
});

test('Open diff asks for the one change at that event and opens before ↔ after', async () => {
  const { d, calls, seen } = deps({ 'session/diff': () => ({ files: [D] }) });
  await openDiff(d, { thread_id: T, seq: 12, path: 'src/pay.py' });
  assert.deepEqual(calls[0]?.params, { thread_id: T, to_seq: 12, path: 'src/pay.py', from_seq: 11 });
  assert.deepEqual(seen, [`diff blob:/${T}/h1/src/pay.py blob:/${T}/h2/src/pay.py src/pay.py (agent, event 12)`]);
});

test('a server without session/diff is told in words, once', async () => {
  const { d, seen } = deps({ 'session/diff': () => { throw Object.assign(new Error('Unhandled method session/diff'), { code: -32601 }); } });
  await openDiff(d, { thread_id: T, seq: 1, path: 'a' });
  assert.deepEqual(seen, ['notify warning Session Keeper: Open diff needs a newer server (it does not answer session/diff). []']);
});

test('Changes by the agent opens every changed file in one multi-file diff', async () => {
  const { d, seen } = deps({ 'session/diff': () => ({ files: [D, { ...D, path: 'new.py', before: null }] }) });
  await showChanges(d, { thread_id: T, title: 'Fix', workspace: '/ws/' });
  assert.equal(seen[0], `changes Changes by the agent — Fix ${JSON.stringify([
    ['file:/ws/src/pay.py', `blob:/${T}/h1/src/pay.py`, `blob:/${T}/h2/src/pay.py`],
    ['file:/ws/new.py', `blob:/${T}/none/new.py`, `blob:/${T}/h2/new.py`]])}`);
});

const PREVIEW: RewindResult = { rewind_seq: null, undo_available: false, steps: [
  { path: 'src/pay.py', action: 'restore', reason: 'to the version of event 12 (agent)', outcome: null, before_hash: 'h3', after_hash: 'h2' },
  { path: 'notes.md', action: 'refused', reason: 'changed by the user since', outcome: null, before_hash: null, after_hash: null },
] };

test('the rewind preview says per file what happens', () => {
  assert.deepEqual(renderRewindPreview(PREVIEW), { changes: 1, refused: 1, lines: ['• src/pay.py: restore — to the version of event 12 (agent)', '• notes.md: refused — changed by the user since'] });
});

test('rewind previews first, runs only when confirmed, and offers Undo', async () => {
  const done: RewindResult = { rewind_seq: 20, undo_available: true, steps: [{ ...PREVIEW.steps[0]!, outcome: 'written' }] };
  const { d, calls, seen } = deps({ 'session/rewind': (p) => (p.undo ? { steps: [], rewind_seq: 21, undo_available: false } : p.dry_run ? PREVIEW : done) }, ['Rewind 1 File'], ['Undo']);
  await rewindFlow(d, { thread_id: T, to_seq: 12, paths: ['src/pay.py'] }, 'src/pay.py');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls.map((c) => c.params), [
    { thread_id: T, to_seq: 12, paths: ['src/pay.py'], dry_run: true },
    { thread_id: T, to_seq: 12, paths: ['src/pay.py'], dry_run: false },
    { thread_id: T, undo: true },
  ]);
  assert.match(seen[0] ?? '', /^modal Rewind src\/pay\.py to event 12\? \| What changes on disk:\n• src\/pay\.py: restore/);
  assert.match(seen[1] ?? '', /rewound 1 file to event 12\. \[Undo\]/);
});

test('a cancelled preview writes nothing', async () => {
  const { d, calls } = deps({ 'session/rewind': () => PREVIEW }, [undefined]);
  assert.equal(await rewindFlow(d, { thread_id: T, to_seq: 12 }, 'the files'), undefined);
  assert.equal(calls.length, 1);
});

test('files changed by someone else are only rewound when asked explicitly, with force', async () => {
  const refusedOnly: RewindResult = { ...PREVIEW, steps: [PREVIEW.steps[1]!] };
  const { d, calls, seen } = deps({ 'session/rewind': (p) => (p.dry_run ? refusedOnly : { steps: [{ ...PREVIEW.steps[1]!, outcome: 'written' }], rewind_seq: 3, undo_available: true }) },
    ['Rewind Anyway (1 Changed File Too)']);
  await rewindFlow(d, { thread_id: T, to_seq: 12 }, 'the files');
  assert.match(seen[0] ?? '', /“Rewind Anyway \(1 Changed File Too\)” rewinds it too and keeps that content, so Undo brings it back/);
  assert.match(seen[0] ?? '', /\| Rewind Anyway \(1 Changed File Too\)$/);
  assert.deepEqual(calls[1]?.params, { thread_id: T, to_seq: 12, dry_run: false, force: true });
});

test('nothing to rewind says so and writes nothing', async () => {
  const same: RewindResult = { ...PREVIEW, steps: [{ ...PREVIEW.steps[0]!, action: 'unchanged', reason: 'already holds it' }] };
  const { d, calls, seen } = deps({ 'session/rewind': () => same });
  await rewindFlow(d, { thread_id: T, to_seq: 12 }, 'src/pay.py');
  assert.equal(calls.length, 1);
  assert.match(seen[0] ?? '', /^modal Nothing to rewind/);
});
