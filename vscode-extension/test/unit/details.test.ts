import assert from 'node:assert/strict';
import { test } from 'node:test';
import { relativeTime } from '../../src/format';
import { detailsPath, renderDetails, renderTimelineEntry, threadIdFromPath } from '../../src/ui/details';
import type { SessionSummary, TimelineEntry } from '../../src/protocol';
import { NOW, thread } from './fixtures';

const entry = (over: Partial<TimelineEntry>): TimelineEntry => ({ seq: null, ts: null, type: 'x', session_id: null, summary: '', ...over });
const session = (over: Partial<SessionSummary>): SessionSummary => ({
  session_id: 's', started_at: '2026-05-01T09:00:00Z', last_activity: null, source: 'startup', resumed_from: null, forked_from: null,
  branch: 'main', last_seq: 3, event_count: 4, status: 'ok', path: '/store/x.jsonl', archived: false, ...over,
});

test('details paths round-trip the thread id', () => {
  assert.equal(threadIdFromPath(detailsPath('abc')), 'abc');
  assert.equal(detailsPath('abc', 'Fix: a/b #1'), '/thread/abc/Fix a b 1.md');
  assert.equal(threadIdFromPath(detailsPath('abc', 'Fix: a/b #1')), 'abc');
  assert.equal(threadIdFromPath('/report/abc.md'), undefined);
});

test('timeline entries show seq, time, type and a summary', () => {
  assert.equal(renderTimelineEntry(entry({ seq: 3, ts: '2026-05-01T10:00:00.123Z', type: 'tool_call', summary: 'pytest -q' })), '    3  2026-05-01 10:00:00Z  tool_call         pytest -q');
});

test('details document has the thread table, sessions and timeline', () => {
  const md = renderDetails({ thread: thread(), sessions: [session({ session_id: 's1' })], timeline: [entry({ seq: 1, type: 'session_meta' })], timeline_total: 1, damaged: [] }, NOW);
  assert.match(md, /^# Fix payment rounding/);
  assert.match(md, /\| Branch \| fix\/payment \|/);
  assert.match(md, /## Sessions \(1\)\n\n- `s1` — started_at: 2026-05-01T09:00:00Z/);
  assert.match(md, /## Timeline \(1 events\)/);
});

test('details say when the timeline is truncated and list damaged records', () => {
  const md = renderDetails({
    thread: thread({ cost_usd: 1.5 }), sessions: [], timeline: [entry({ seq: 900, type: 'todo', summary: 'x' })], timeline_total: 901,
    damaged: [{ session_id: 's1', line: 7, kind: 'checksum', reason: 'checksum mismatch' }],
  }, NOW);
  assert.match(md, /## Timeline \(901 events, the last 1 of 901\)/);
  assert.match(md, /- session `s1` line 7: checksum mismatch/);
  assert.match(md, /\| Cost \| \$1\.50 \|/);
});

test('relative time covers minutes, hours, days and old dates', () => {
  assert.equal(relativeTime('2026-05-01T11:55:00Z', NOW), '5 min ago');
  assert.equal(relativeTime('2026-04-28T12:00:00Z', NOW), '3 d ago');
  assert.equal(relativeTime('2025-01-01T00:00:00Z', NOW), '2025-01-01');
  assert.equal(relativeTime(null, NOW), 'never');
});
