import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SwitchBackResult } from '../../src/protocol';
import {
  renderBlockedDialog, renderContinueConfirm, renderDifference, renderDriftDialog, renderSwitchBack, touchedDrift,
} from '../../src/ui/drift';
import { diff, DRIFT, report } from './fixtures';

const FILE = diff('file_changed', { path: 'src/pay.py', seq: 12, hash: 'aa', author: 'agent' }, { path: 'src/pay.py', hash: 'bb', author: 'external' }, 'src/pay.py changed outside the session');
const HEAD = diff('head', 'a'.repeat(40), 'b'.repeat(40), '2 commit(s) ahead of the recorded HEAD: bbbbbbb merge; ccccccc fix');
const DRIFTED = report({
  verdict: 'drift', differences: [diff('branch', 'fix/payment', 'main'), HEAD, FILE],
  choices: ['continue', 'switch_back', 'fork', 'cancel'], switch_back: 'git checkout fix/payment',
});

test('differences read recorded → now: branch, HEAD as short SHAs with how it moved, files by path', () => {
  assert.equal(renderDifference(diff('branch', 'fix/payment', 'main')), 'Branch: fix/payment → main');
  assert.equal(renderDifference(HEAD), 'HEAD: aaaaaaa → bbbbbbb — 2 commit(s) ahead of the recorded HEAD: bbbbbbb merge; ccccccc fix');
  assert.equal(renderDifference(FILE), 'File changed: src/pay.py changed outside the session');
  assert.equal(renderDifference(diff('file_missing', { path: 'a.py' }, null)), 'File missing: a.py is missing');
  assert.equal(renderDifference(diff('cwd_missing', '/repo-a', null)), 'Working directory missing: /repo-a → missing');
  assert.equal(renderDifference(diff('model', 'm1', null)), 'Model: m1 → —');
});

test('the drift dialog defaults to Fork: Enter never continues, and Continue is never first', () => {
  const d = renderDriftDialog(DRIFTED, 'Fix payment');
  assert.deepEqual(d.choices.map((c) => c.value), ['fork', 'switch_back', 'continue']);
  assert.deepEqual(d.choices.map((c) => c.label), ['Fork: New Thread on main', 'Switch Back to fix/payment…', 'Continue Anyway on main…']);
  assert.match(d.message, /3 differences\). Nothing continues until you choose\./);
});

test('every choice of the drift dialog says what it does, and every difference is listed', () => {
  const d = renderDriftDialog(DRIFTED, 'Fix payment');
  for (const c of d.choices) assert.ok(d.detail.includes(`${c.label} — `), `no explanation for ${c.label}`);
  assert.match(d.detail, /Cancel — changes nothing\./);
  assert.match(d.detail, /runs `git checkout fix\/payment` after you confirm \(never over uncommitted work\), then resumes/);
  assert.match(d.detail, /asks once more: files the agent touched changed/);
  assert.equal(d.detail.split('\n').filter((l) => l.startsWith('• ')).length, 3);
});

test('without a way back the dialog offers no Switch Back; a branch in another worktree offers to open it', () => {
  const none = renderDriftDialog({ ...DRIFTED, switch_back: null }, 'T');
  assert.deepEqual(none.choices.map((c) => c.value), ['fork', 'continue']);
  const other = renderDriftDialog({ ...DRIFTED, switch_back: null, switch_back_worktree: '/wt/pay' }, 'T');
  assert.equal(other.choices[1]?.label, 'Open the Worktree of fix/payment…');
  assert.match(other.detail, /checked out in \/wt\/pay; opens it in a new window/);
});

test('the drift dialog keeps only the choices the server offers, fork still first', () => {
  const d = renderDriftDialog({ ...DRIFT, choices: ['continue', 'fork', 'cancel'] }, 't');
  assert.deepEqual(d.choices.map((c) => c.value), ['fork', 'continue']);
});

test('continuing over files the agent touched asks a second time, Show Details first', () => {
  assert.deepEqual(touchedDrift(DRIFTED), ['src/pay.py']);
  const c = renderContinueConfirm(DRIFTED, 'Fix');
  assert.ok(c);
  assert.deepEqual(c.choices.map((x) => x.value), ['details', 'continue']);
  assert.match(c.message, /1 file the agent touched changed outside the session/);
  assert.match(c.detail, /• src\/pay\.py/);
  assert.equal(renderContinueConfirm(report({ verdict: 'drift', differences: [diff('branch', 'a', 'b')] }), 'T'), undefined);
});

test('blocked dialog explains why and offers relocate, fork, export', () => {
  const r = report({
    verdict: 'blocked', choices: ['relocate', 'fork', 'export'], relocate_to: '/work/repo-a-renamed',
    differences: [diff('other_repository', 'github.com/a/x', 'github.com/b/y')],
    damaged: [{ session_id: 's1', line: 17, reason: 'checksum mismatch' }],
  });
  const d = renderBlockedDialog(r, 'T');
  assert.match(d.message, /cannot be resumed/);
  assert.match(d.detail, /Different repository/);
  assert.match(d.detail, /line 17: checksum mismatch/);
  assert.match(d.detail, /found at \/work\/repo-a-renamed: Relocate resumes it there/);
  assert.deepEqual(d.choices.map((c) => c.label), ['Relocate', 'Fork', 'Export']);
});

function plan(over: Partial<SwitchBackResult>): SwitchBackResult {
  return { branch: 'fix/payment', command: 'git checkout fix/payment', ran: false, refused: null, message: 'runs `git checkout fix/payment`', worktree: null, uncommitted: [], ...over };
}

test('switch back confirms what runs where; refusals explain and offer the way out', () => {
  const ok = renderSwitchBack(plan({}), 'Fix', '/ws');
  assert.equal(ok.message, 'Switch back to fix/payment and resume “Fix”?');
  assert.match(ok.detail, /runs `git checkout fix\/payment` in \/ws, then resumes/);
  assert.deepEqual(ok.choices.map((c) => c.value), ['run']);
  const dirty = renderSwitchBack(plan({ refused: 'uncommitted', uncommitted: ['a.py', 'b.py'] }), 'Fix', '/ws');
  assert.match(dirty.message, /would lose or carry along uncommitted work; nothing was changed/);
  assert.match(dirty.detail, /• a\.py\n• b\.py/);
  assert.deepEqual(dirty.choices.map((c) => c.value), ['show_changes']);
  const other = renderSwitchBack(plan({ refused: 'other_worktree', worktree: '/wt/pay' }), 'Fix', '/ws');
  assert.deepEqual(other.choices.map((c) => c.value), ['open_worktree']);
  assert.match(other.detail, /\/wt\/pay/);
  const gone = renderSwitchBack(plan({ refused: 'missing_branch', message: 'no way back' }), 'Fix', '/ws');
  assert.deepEqual(gone.choices, []);
  assert.match(gone.message, /Cannot switch back to fix\/payment: no way back/);
});
