import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Report, ResumeResult, SwitchBackResult } from '../../src/protocol';
import { agentCommand, resumeFlow, type AgentCommand, type ResumeDeps, type ResumeUi } from '../../src/resume';
import { diff, logger, report, requester, THREAD_ID } from './fixtures';

const TID = THREAD_ID;

const FILE = diff('file_changed', { path: 'pay.py', seq: 3, hash: 'a', author: 'agent' }, { path: 'pay.py', hash: 'b', author: 'external' }, 'pay.py changed outside the session');
const DRIFTED = report({ verdict: 'drift', differences: [diff('branch', 'fix/payment', 'main')], choices: ['continue', 'switch_back', 'fork', 'cancel'], switch_back: 'git checkout fix/payment' });

interface Shown { kind: string; message: string; detail?: string; labels: string[] }

function plan(over: Partial<SwitchBackResult> = {}): SwitchBackResult {
  return { branch: 'fix/payment', command: 'git checkout fix/payment', ran: false, refused: null, message: 'runs it', worktree: null, uncommitted: [], ...over };
}

/**
 * A flow over fakes: `checks` are the reports checkResume answers in turn; `modal` answers the
 * dialogs in turn: a number is "the button at that index" (0 = the default, what Enter picks),
 * undefined is Cancel / Escape.
 */
function fakes(checks: Report[], modal: (number | undefined)[] = [], opts: { switchBack?: SwitchBackResult[]; command?: AgentCommand; current?: string; resumes?: ResumeResult[] } = {}) {
  const shown: Shown[] = [];
  const did: string[] = [];
  const terminals: { command: AgentCommand; title: string }[] = [];
  const plans = [...(opts.switchBack ?? [])];
  const r = requester({
    'session/checkResume': () => checks.shift() ?? report(),
    'session/resume': (p: { decision: string; thread_id: string }) => opts.resumes?.shift() ?? ({
      report: { ...report(), decision: p.decision }, thread_id: p.decision === 'fork' ? 'new-thread' : p.thread_id, session_id: 'sess-2',
      ...(opts.command ? { command: opts.command } : {}),
    } as ResumeResult),
    'session/fork': () => ({ thread_id: 'forked', session_id: 'sess-f' }),
    'session/switchBack': () => plans.shift() ?? plan(),
  });
  const answers = [...modal];
  const ui: ResumeUi = {
    modal: async (kind, message, detail, labels) => {
      shown.push({ kind, message, detail, labels });
      const i = answers.shift();
      return i === undefined ? undefined : labels[i];
    },
    notify: async (kind, message, labels) => { shown.push({ kind, message, labels }); return undefined; },
    showReport: async () => { did.push('report'); },
    showDetails: async (id) => { did.push(`details ${id}`); },
    exportThread: async (id) => { did.push(`export ${id}`); },
    openFile: async (p) => { did.push(`open ${p}`); },
    openFolder: async (p) => { did.push(`folder ${p}`); },
    openSourceControl: async () => { did.push('scm'); },
    runAgent: (command, title) => { terminals.push({ command, title }); },
  };
  const log = logger();
  const deps: ResumeDeps = { request: r.request, ui, workspace: '/ws', log, currentThread: () => opts.current };
  return { calls: r.calls, shown, did, terminals, log, deps, methods: () => r.calls.map((c) => `${c.method}${(c.params as { decision?: string; dry_run?: boolean }).decision ? `:${(c.params as { decision: string }).decision}` : ''}${(c.params as { dry_run?: boolean }).dry_run === false ? ':run' : ''}`) };
}

test('ok verdict resumes without asking and shows what came back', async () => {
  const f = fakes([report()]);
  const end = await resumeFlow(f.deps, TID, 'Fix');
  assert.equal(end.kind, 'resumed');
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/resume:continue']);
  assert.deepEqual(f.calls[0]?.params, { thread_id: TID, workspace: '/ws' });
  assert.equal(f.shown.filter((s) => s.kind !== 'info').length, 0);
  assert.match(f.shown[0]?.message ?? '', /Resumed “Fix”: restored to event 42, todos: 3\/5 done/);
  assert.ok(f.log.lines.some((l) => /^info Resume “Fix” \(1111.*\): check says ok/.test(l)));
  assert.ok(f.log.lines.some((l) => /^info Resume “Fix” \(.*\): continue → verdict ok/.test(l)));
});

test('pressing Enter in the drift dialog forks: it never continues over the drift', async () => {
  const f = fakes([DRIFTED], [0]);
  const end = await resumeFlow(f.deps, TID, 'Fix');
  assert.deepEqual(end, { kind: 'forked', thread_id: 'new-thread', session_id: 'sess-2' });
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/resume:fork']);
  assert.ok(f.log.lines.includes('info Resume “Fix”: decision fork'));
});

test('Cancel (or Escape) in the drift dialog sends nothing and keeps whatever is current', async () => {
  const f = fakes([DRIFTED], [undefined]);
  assert.deepEqual(await resumeFlow(f.deps, TID, 'Fix'), { kind: 'cancelled' });
  assert.deepEqual(f.methods(), ['session/checkResume']);
  assert.ok(f.log.lines.includes('info Resume “Fix”: decision cancel'));
});

test('Continue anyway resumes at once when no file the agent touched drifted', async () => {
  const f = fakes([DRIFTED], [2]);
  assert.equal(f.shown.length, 0);
  await resumeFlow(f.deps, TID, 'Fix');
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/resume:continue']);
  assert.equal(f.shown.filter((s) => s.labels.length > 1).length, 1);
});

test('Continue anyway over files the agent touched asks again; its default shows details and resumes nothing', async () => {
  const drift = { ...DRIFTED, differences: [...DRIFTED.differences, FILE] };
  const f = fakes([drift], [2, 0]);
  assert.deepEqual(await resumeFlow(f.deps, TID, 'Fix'), { kind: 'cancelled' });
  assert.deepEqual(f.methods(), ['session/checkResume']);
  assert.match(f.shown[1]?.message ?? '', /1 file the agent touched changed/);
  assert.deepEqual(f.did, [`details ${TID}`]);
  const yes = fakes([drift], [2, 1]);
  await resumeFlow(yes.deps, TID, 'Fix');
  assert.deepEqual(yes.methods(), ['session/checkResume', 'session/resume:continue']);
});

test('Switch back asks first, runs the checkout, then resumes the thread (checked again)', async () => {
  const f = fakes([DRIFTED, report()], [1, 0], { switchBack: [plan(), plan({ ran: true, message: 'ran `git checkout fix/payment`' })] });
  const end = await resumeFlow(f.deps, TID, 'Fix');
  assert.equal(end.kind, 'switched');
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/switchBack', 'session/switchBack:run', 'session/checkResume', 'session/resume:continue']);
  assert.deepEqual(f.calls[1]?.params, { thread_id: TID, workspace: '/ws', dry_run: true });
  assert.equal(f.shown[1]?.message, 'Switch back to fix/payment and resume “Fix”?');
});

test('declining the switch-back confirmation runs nothing', async () => {
  const f = fakes([DRIFTED], [1, undefined], { switchBack: [plan()] });
  assert.deepEqual(await resumeFlow(f.deps, TID, 'Fix'), { kind: 'cancelled' });
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/switchBack']);
});

test('switch back of the current thread does not resume it again: its session goes on', async () => {
  const f = fakes([DRIFTED], [1, 0], { current: TID, switchBack: [plan(), plan({ ran: true })] });
  assert.deepEqual(await resumeFlow(f.deps, TID, 'Fix'), { kind: 'switched', resumed: undefined });
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/switchBack', 'session/switchBack:run']);
  assert.match(f.shown.at(-1)?.message ?? '', /continues where it was/);
});

test('a refused switch back explains and offers the worktree or source control, never runs', async () => {
  const other = fakes([DRIFTED], [1, 0], { switchBack: [plan({ refused: 'other_worktree', worktree: '/wt/pay' })] });
  await resumeFlow(other.deps, TID, 'Fix');
  assert.deepEqual(other.did, ['folder /wt/pay']);
  assert.deepEqual(other.methods(), ['session/checkResume', 'session/switchBack']);
  const dirty = fakes([DRIFTED], [1, 0], { switchBack: [plan({ refused: 'uncommitted', uncommitted: ['a.py'] })] });
  await resumeFlow(dirty.deps, TID, 'Fix');
  assert.deepEqual(dirty.did, ['scm']);
  assert.match(dirty.shown[1]?.message ?? '', /uncommitted work/);
});

test('a failing checkout is reported as an error and resumes nothing', async () => {
  const f = fakes([DRIFTED], [1, 0], { switchBack: [plan(), plan({ ran: false, refused: 'failed', message: 'untracked x.txt would be overwritten' })] });
  assert.deepEqual(await resumeFlow(f.deps, TID, 'Fix'), { kind: 'cancelled' });
  assert.equal(f.shown.at(-1)?.kind, 'error');
  assert.match(f.shown.at(-1)?.message ?? '', /untracked x\.txt would be overwritten/);
  assert.ok(f.log.lines.some((l) => l.startsWith('error Switch back for “Fix” failed')));
});

test("an agent's thread resumes by running the agent's own command in a terminal", async () => {
  const command = { argv: ['codex', 'resume', 'abc'], cwd: '/ws', display: 'codex resume abc' };
  const f = fakes([report({ agent: 'codex' })], [], { command });
  await resumeFlow(f.deps, 'abc', 'Codex thread');
  assert.deepEqual(f.terminals, [{ command, title: 'Codex thread' }]);
  assert.ok(f.log.lines.some((l) => l.includes("running the agent's own resume in a terminal in /ws: codex resume abc")));
});

test('a malformed or missing agent command runs nothing', () => {
  const base = { report: report(), thread_id: 't', session_id: 's', command: null } as ResumeResult;
  assert.equal(agentCommand(base), undefined);
  assert.equal(agentCommand({ ...base, command: { argv: [], cwd: '/ws' } } as unknown as ResumeResult), undefined);
  assert.equal(agentCommand({ ...base, command: { argv: ['x', 3], cwd: '/ws' } } as unknown as ResumeResult), undefined);
  assert.deepEqual(agentCommand({ ...base, command: { argv: ['claude', '--resume', 'x'], cwd: '/w' } } as ResumeResult), { argv: ['claude', '--resume', 'x'], cwd: '/w', display: 'claude --resume x' });
});

test('blocked explains why and can fork, export or relocate', async () => {
  const blocked = report({ verdict: 'blocked', differences: [diff('cwd_missing', '/gone', null)], choices: ['relocate', 'fork', 'export'] });
  const f = fakes([blocked], [0]);
  const end = await resumeFlow(f.deps, TID);
  assert.equal(f.shown[0]?.kind, 'error');
  assert.match(f.shown[0]?.detail ?? '', /Working directory missing: \/gone → missing/);
  assert.deepEqual(end, { kind: 'forked', thread_id: 'forked', session_id: 'sess-f' });
  const relocate = fakes([{ ...blocked, relocate_to: '/moved' }], [0]);
  await resumeFlow(relocate.deps, TID);
  assert.deepEqual(relocate.methods(), ['session/checkResume', 'session/resume:relocate']);
});

test('a relocation that finds more than a new path asks about that drift there', async () => {
  const blocked = report({ verdict: 'blocked', differences: [diff('cwd_missing', '/gone', null)], choices: ['relocate', 'fork', 'export'], relocate_to: '/moved' });
  const there = report({ verdict: 'drift', differences: [diff('relocated', '/gone', '/moved'), diff('branch', 'fix/payment', 'main')], choices: ['continue', 'switch_back', 'fork', 'cancel'] });
  const stopped = { report: there, thread_id: TID, session_id: null } as ResumeResult;
  const f = fakes([blocked, there], [0, 1], { resumes: [stopped] });
  const end = await resumeFlow(f.deps, TID);
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/resume:relocate', 'session/checkResume', 'session/resume:continue']);
  assert.equal((f.calls[3]?.params as { workspace: string }).workspace, '/moved');
  assert.equal(f.shown[1]?.kind, 'warning', 'the drift at the new place is asked about');
  assert.equal(end.kind, 'resumed');
});

test('without a thread id the latest thread of the workspace is checked', async () => {
  const f = fakes([report()]);
  await resumeFlow(f.deps, undefined);
  assert.deepEqual(f.calls[0]?.params, { latest: true, workspace: '/ws' });
});

test('a blocked thread with nowhere to relocate is not offered Relocate: Enter does not report a relocation that never happened', async () => {
  const blocked = report({ verdict: 'blocked', differences: [diff('other_repository', 'github.com/a/x', 'github.com/b/y', 'no common root commit')], choices: ['relocate', 'fork', 'export'], relocate_to: null });
  const nothing = { report: { ...blocked, decision: 'relocate' }, thread_id: TID, session_id: null } as ResumeResult;
  const f = fakes([blocked], [0], { resumes: [nothing] });
  await resumeFlow(f.deps, TID, 'Fix');
  assert.deepEqual(f.shown[0]?.labels, ['Fork', 'Export']);
  assert.doesNotMatch(f.shown[0]?.detail ?? '', /Relocate/);
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/fork']);
  assert.ok(!f.shown.some((s) => /Relocated/.test(s.message)), 'no "Relocated" notification');
});

test("relocating an agent's thread runs the agent's command at the new place; it does not ask again", async () => {
  const blocked = report({ verdict: 'blocked', agent: 'codex', differences: [diff('cwd_missing', '/gone', null)], choices: ['relocate', 'fork', 'export'], relocate_to: '/moved' });
  const moved = report({ verdict: 'drift', agent: 'codex', workspace: '/moved', differences: [diff('relocated', '/gone', '/moved')], choices: ['continue', 'switch_back', 'fork', 'cancel'], decision: 'relocate' });
  const command = { argv: ['codex', 'resume', TID], cwd: '/moved', display: `codex resume ${TID}` };
  const f = fakes([blocked], [0], { resumes: [{ report: moved, thread_id: TID, session_id: null, command } as ResumeResult] });
  const end = await resumeFlow(f.deps, TID, 'Fix');
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/resume:relocate']);
  assert.deepEqual(f.terminals, [{ command, title: 'Fix' }]);
  assert.equal(f.shown.filter((s) => s.detail !== undefined).length, 1, 'one dialog: the blocked one');
  assert.equal(end.kind, 'resumed');
});

test("Fork of a blocked Codex / Claude Code thread runs the agent's own fork (session/fork knows only our threads)", async () => {
  const blocked = report({ verdict: 'blocked', agent: 'codex', differences: [diff('other_repository', 'a', 'b')], choices: ['relocate', 'fork', 'export'] });
  const command = { argv: ['codex', 'fork', TID], cwd: '/ws', display: `codex fork ${TID}` };
  const f = fakes([blocked], [0], { command });
  const end = await resumeFlow(f.deps, TID, 'Fix');
  assert.deepEqual(f.methods(), ['session/checkResume', 'session/resume:fork']);
  assert.deepEqual(f.terminals, [{ command, title: 'Fix' }]);
  assert.equal(end.kind, 'forked');
});
