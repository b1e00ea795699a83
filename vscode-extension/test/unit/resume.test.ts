import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Report, Requester, ResumeResult } from '../../src/protocol';
import { resumeFlow, type ResumeUi } from '../../src/resume';
import { DRIFT, report, diff } from './fixtures';

interface Call { method: string; params: unknown }

function fakes(check: Report, answers: { modal?: string; notify?: string } = {}, server: Partial<Report> = {}) {
  const calls: Call[] = [];
  const shown: { kind: string; message: string; detail?: string; labels: string[] }[] = [];
  const request = (async (method: string, params: unknown) => {
    calls.push({ method, params });
    if (method === 'session/checkResume') return check;
    if (method === 'session/resume') return { report: { ...check, verdict: 'ok', ...server }, thread_id: (params as { decision?: string }).decision === 'fork' ? 'new-thread' : check.thread_id, session_id: 'sess-2' } satisfies ResumeResult;
    if (method === 'session/fork') return { thread_id: 'forked', session_id: 'sess-f' };
    throw new Error(`unexpected ${method}`);
  }) as Requester;
  const ui: ResumeUi & { copied?: string; exported?: string; opened?: string } = {
    modal: async (kind, message, detail, labels) => { shown.push({ kind, message, detail, labels }); return answers.modal; },
    notify: async (kind, message, labels) => { shown.push({ kind, message, labels }); return answers.notify; },
    showReport: async () => undefined,
    exportThread: async (id) => { ui.exported = id; },
    copy: async (t) => { ui.copied = t; },
    openFile: async (p) => { ui.opened = p; },
  };
  return { calls, shown, ui, deps: { request, ui, workspace: '/ws' } };
}

test('ok verdict resumes without asking and shows what came back', async () => {
  const f = fakes(report());
  const end = await resumeFlow(f.deps, 'tid', 'Fix');
  assert.equal(end.kind, 'resumed');
  assert.deepEqual(f.calls.map((c) => c.method), ['session/checkResume', 'session/resume']);
  assert.deepEqual(f.calls[0]?.params, { thread_id: 'tid', workspace: '/ws' });
  assert.deepEqual(f.calls[1]?.params, { thread_id: report().thread_id, workspace: '/ws', decision: 'continue' });
  assert.equal(f.shown.length, 1);
  assert.match(f.shown[0]?.message ?? '', /Resumed “Fix”: restored to event 42, todos: 3\/5 done, verifier: tests 7\/9 passed/);
});

test('without a thread id the latest thread of the workspace is checked', async () => {
  const f = fakes(report());
  await resumeFlow(f.deps, undefined);
  assert.deepEqual(f.calls[0]?.params, { latest: true, workspace: '/ws' });
});

test('drift asks in a modal and continues only when the user says so', async () => {
  const f = fakes(DRIFT, { modal: 'Continue anyway' });
  const end = await resumeFlow(f.deps, 'tid', 'Fix');
  assert.equal(end.kind, 'resumed');
  assert.equal(f.shown[0]?.kind, 'warning');
  assert.deepEqual(f.shown[0]?.labels, ['Continue anyway', 'Switch back', 'Fork here']);
  assert.equal((f.calls[1]?.params as { decision: string }).decision, 'continue');
});

test('drift dismissed records cancel and resumes nothing', async () => {
  const f = fakes(DRIFT);
  const end = await resumeFlow(f.deps, 'tid');
  assert.equal(end.kind, 'cancelled');
  assert.deepEqual(f.calls.map((c) => (c.params as { decision?: string }).decision), [undefined, 'cancel']);
});

test('switch back shows (and can copy) the git command but never runs it', async () => {
  const f = fakes(DRIFT, { modal: 'Switch back', notify: 'Copy Command' });
  const end = await resumeFlow(f.deps, 'tid');
  assert.deepEqual(end, { kind: 'switch_back', command: 'git checkout fix/payment' });
  assert.match(f.shown[1]?.message ?? '', /git checkout fix\/payment/);
  assert.equal(f.ui.copied, 'git checkout fix/payment');
});

test('fork here resumes with the fork decision and returns the new thread', async () => {
  const f = fakes(DRIFT, { modal: 'Fork here' });
  const end = await resumeFlow(f.deps, 'tid');
  assert.deepEqual(end, { kind: 'forked', thread_id: 'new-thread', session_id: 'sess-2' });
});

test('blocked explains why and can fork or export', async () => {
  const blocked = report({ verdict: 'blocked', differences: [diff('cwd_missing', '/gone', null)], choices: ['relocate', 'fork', 'export'] });
  const f = fakes(blocked, { modal: 'Fork' });
  const end = await resumeFlow(f.deps, 'tid');
  assert.equal(f.shown[0]?.kind, 'error');
  assert.match(f.shown[0]?.detail ?? '', /Working directory missing: recorded \/gone → now missing/);
  assert.deepEqual(end, { kind: 'forked', thread_id: 'forked', session_id: 'sess-f' });
  assert.deepEqual(f.calls[1], { method: 'session/fork', params: { thread_id: blocked.thread_id, workspace: '/ws' } });

  const g = fakes(blocked, { modal: 'Export' });
  assert.deepEqual(await resumeFlow(g.deps, 'tid'), { kind: 'exported', path: undefined });
  assert.equal(g.ui.exported, blocked.thread_id, 'no export_path from the server: client-side export');
});

test('export and relocate are sent to the server as resume decisions', async () => {
  const blocked = report({ verdict: 'blocked', choices: ['relocate', 'fork', 'export'] });
  const e = fakes(blocked, { modal: 'Export', notify: 'Open' }, { export_path: '/tmp/x.jsonl' });
  assert.deepEqual(await resumeFlow(e.deps, 'tid', 'T'), { kind: 'exported', path: '/tmp/x.jsonl' });
  assert.equal((e.calls[1]?.params as { decision: string }).decision, 'export');
  assert.equal(e.ui.opened, '/tmp/x.jsonl');
  assert.equal(e.ui.exported, undefined);

  const r = fakes(blocked, { modal: 'Relocate' });
  assert.equal((await resumeFlow(r.deps, 'tid')).kind, 'resumed');
  assert.equal((r.calls[1]?.params as { decision: string }).decision, 'relocate');
});

test('switch back is not announced twice when the server already showed its command', async () => {
  const f = fakes(DRIFT, { modal: 'Switch back' }, { switch_back: 'git switch fix/payment' });
  assert.deepEqual(await resumeFlow(f.deps, 'tid'), { kind: 'switch_back', command: 'git switch fix/payment' });
  assert.equal(f.shown.length, 1, 'only the drift dialog');
});
