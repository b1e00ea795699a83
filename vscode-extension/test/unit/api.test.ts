import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApi } from '../../src/api';
import type { Requester } from '../../src/protocol';
import { DRIFT, report, status } from './fixtures';

function api(check = report()) {
  const calls: { method: string; params: unknown }[] = [];
  const request = (async (method: string, params: unknown) => {
    calls.push({ method, params });
    switch (method) {
      case 'session/start': return { thread_id: 't', session_id: 's' };
      case 'session/record': return { acks: [{ seq: 1, durability: 'durable' }] };
      case 'session/checkResume': return check;
      case 'session/resume': return { report: check, thread_id: check.thread_id, session_id: 's2' };
      case 'session/current': return status();
      default: throw new Error(method);
    }
  }) as Requester;
  return { calls, api: createApi({ request, workspace: () => '/ws', durability: () => 'durable' }) };
}

test('startThread uses the first workspace folder unless one is given', async () => {
  const a = api();
  await a.api.startThread({ title: 'T' });
  await a.api.startThread({ workspace: '/other' });
  assert.deepEqual(a.calls.map((c) => c.params), [{ workspace: '/ws', title: 'T' }, { workspace: '/other' }]);
});

test('record defaults to the durability setting', async () => {
  const a = api();
  await a.api.record('s', [{ type: 'message' }]);
  await a.api.record('s', [{ type: 'message' }], 'none');
  assert.deepEqual(a.calls.map((c) => (c.params as { durability: string }).durability), ['durable', 'none']);
});

test('record refuses an empty batch before asking the server', async () => {
  const a = api();
  await assert.rejects(a.api.record('s', []), /at least one event/);
  assert.equal(a.calls.length, 0);
});

test('resume continues on ok but returns a drift report without a decision', async () => {
  const ok = api();
  assert.equal((await ok.api.resume('tid')).session_id, 's2');
  const drift = api(DRIFT);
  const r = await drift.api.resume('tid');
  assert.equal(r.session_id, null);
  assert.equal(r.report.verdict, 'drift');
  assert.deepEqual(drift.calls.map((c) => c.method), ['session/checkResume']);
  await drift.api.resume('tid', { decision: 'fork' });
  assert.equal((drift.calls.at(-1)?.params as { decision: string }).decision, 'fork');
});

test('current returns the status', async () => {
  assert.equal((await api().api.current())?.title, 'Fix payment rounding');
});
