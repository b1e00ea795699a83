import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderBlockedDialog, renderDifference, renderDriftDialog, renderOutcome, renderReportMarkdown, subsystemLines, switchBackCommand } from '../../src/ui/drift';
import { diff, DRIFT, report } from './fixtures';

test('a difference reads recorded versus now, with its detail', () => {
  assert.equal(renderDifference(diff('branch', 'fix/payment', 'main')), 'Branch: recorded fix/payment → now main');
  assert.equal(renderDifference(diff('file_changed', 'sha256:aa', 'sha256:bb', 'src/pay.py')), 'File changed: recorded sha256:aa → now sha256:bb (src/pay.py)');
  assert.equal(renderDifference(diff('model', 'm1', null)), 'Model: recorded m1 → now —');
  assert.equal(renderDifference(diff('cwd_missing', '/repo-a', null)), 'Working directory missing: recorded /repo-a → now missing');
});

test('drift dialog lists every difference and offers the three choices (Cancel is the modal close)', () => {
  const d = renderDriftDialog(DRIFT, 'Fix payment');
  assert.match(d.message, /3 differences/);
  assert.equal(d.detail.split('\n').filter((l) => l.startsWith('• ')).length, 3);
  assert.match(d.detail, /git checkout fix\/payment/);
  assert.deepEqual(d.choices.map((c) => c.label), ['Continue anyway', 'Switch back', 'Fork here']);
  assert.deepEqual(d.choices.map((c) => c.value), ['continue', 'switch_back', 'fork']);
});

test('drift dialog keeps only the choices the server offers', () => {
  const d = renderDriftDialog({ ...DRIFT, choices: ['continue', 'cancel'] }, 't');
  assert.deepEqual(d.choices.map((c) => c.value), ['continue']);
});

test('switch back command uses the recorded branch, else the recorded head', () => {
  assert.equal(switchBackCommand(DRIFT), 'git checkout fix/payment');
  assert.equal(switchBackCommand(report({ differences: [diff('head', 'abc1234', 'x')] })), 'git checkout abc1234');
  assert.equal(switchBackCommand(report()), undefined);
});

test('blocked dialog explains why and offers relocate, fork, export', () => {
  const r = report({
    verdict: 'blocked', choices: ['relocate', 'fork', 'export'],
    differences: [diff('other_repository', 'github.com/a/x', 'github.com/b/y')],
    damaged: [{ session_id: 's1', line: 17, reason: 'checksum mismatch' }],
  });
  const d = renderBlockedDialog(r, 'T');
  assert.match(d.message, /cannot be resumed/);
  assert.match(d.detail, /Different repository/);
  assert.match(d.detail, /line 17: checksum mismatch/);
  assert.deepEqual(d.choices.map((c) => c.label), ['Relocate', 'Fork', 'Export']);
  assert.doesNotMatch(d.detail, /found at/);
});

test('blocked dialog names where the moved repository was found', () => {
  const r = report({
    verdict: 'blocked', choices: ['relocate', 'fork', 'export'], relocate_to: '/work/repo-a-renamed',
    differences: [diff('cwd_missing', '/work/repo-a', null)],
  });
  assert.match(renderBlockedDialog(r, 'T').detail, /found at \/work\/repo-a-renamed: Relocate resumes it there/);
});

test('outcome of a clean resume is informational with todos and tests', () => {
  const o = renderOutcome(report(), 'Fix payment');
  assert.equal(o.severity, 'info');
  assert.equal(o.message, 'Resumed “Fix payment”: restored to event 42, todos: 3/5 done, verifier: tests 7/9 passed.');
  assert.deepEqual(o.attention, []);
});

test('outcome of a resume over drift says it continued over the differences', () => {
  const o = renderOutcome(DRIFT, 'T');
  assert.equal(o.severity, 'warning');
  assert.equal(o.attention[0], 'Continuing over 3 recorded differences (branch, head commit, file changed).');
});

test('outcome of a fork over drift does not claim to continue over the differences', () => {
  const o = renderOutcome(DRIFT, 'T', 'Forked');
  assert.equal(o.severity, 'info');
  assert.deepEqual(o.attention, []);
  assert.match(o.message, /^Forked “T”: /);
});

test('outcome counts one attention item in the singular', () => {
  const o = renderOutcome(report({ in_doubt_operations: [{ operation_id: 'op-7', tool: 'shell', seq: 40 }] }), 'T');
  assert.match(o.message, / — 1 item needs attention\.$/);
});

test('outcome flags in-doubt operations, stale verifier, quarantine and hook failures', () => {
  const o = renderOutcome(report({
    in_doubt_operations: [{ operation_id: 'op-7', tool: 'shell', seq: 40 }],
    rerun_verifier: true,
    invalidated: [{ subsystem: 'verifier', reason: 'src/pay.py changed after the tests ran' }, { subsystem: 'model', reason: 'unknown model' }],
    quarantined: [{ session_id: 's', path: '/x.quarantine', bytes: 33 }],
    hook_failures: [{ hook: 'warmup', source: 'resume', error: 'timeout' }],
  }), 'T');
  assert.equal(o.severity, 'warning');
  assert.match(o.message, /verifier: tests 7\/9 passed \(stale\)/);
  assert.match(o.message, /5 items need attention/);
  assert.match(o.attention[0] ?? '', /op-7 \(shell, event 40\)/);
  assert.match(o.attention[1] ?? '', /stale: src\/pay.py changed/);
  assert.ok(o.attention.some((a) => a.includes('model is stale: unknown model')));
});

test('every subsystem is listed generically; one named in invalidated is stale, even one the client never heard of', () => {
  const r = report({
    subsystems: { ...report().subsystems, telepathy: { summary: {}, headline: '3 thoughts' } },
    invalidated: [{ subsystem: 'telepathy', reason: 'mind changed' }, { subsystem: 'ghost', reason: 'gone' }],
  });
  const lines = subsystemLines(r);
  assert.deepEqual(lines.map((l) => l.name), ['todos', 'verifier', 'cost', 'telepathy', 'ghost']);
  assert.deepEqual(lines.find((l) => l.name === 'telepathy'), { name: 'telepathy', headline: '3 thoughts', stale: 'mind changed' });
  assert.equal(lines.find((l) => l.name === 'todos')?.stale, undefined);
  assert.match(renderReportMarkdown(r, 'T'), /- \*\*telepathy\*\*: 3 thoughts — stale: mind changed/);
});

test('report markdown has the verdict, differences and attention items', () => {
  const md = renderReportMarkdown({ ...DRIFT, in_doubt_operations: [{ operation_id: 'op-1', tool: 'edit', seq: 3 }] }, 'T');
  assert.match(md, /Verdict: \*\*drift\*\*/);
  assert.match(md, /## Differences \(recorded → now\)\n- Branch: recorded fix\/payment → now main/);
  assert.match(md, /## Needs attention\n- Continuing over 3 recorded differences.*\n- Operation op-1/);
});
