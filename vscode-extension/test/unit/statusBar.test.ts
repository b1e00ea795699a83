import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIX, PICK, renderStatus, StatusBarController, type StatusItem } from '../../src/ui/statusBar';
import { diff, status } from './fixtures';

test('without a current session the item says what it is and how many sessions there are', () => {
  assert.equal(renderStatus(null, { count: '3' }).text, '$(history) Agent sessions (3)');
  assert.match(renderStatus(null, { count: '3' }).tooltip, /3 agent sessions in this workspace .*none is current/);
  assert.match(renderStatus(null, { count: '0' }).tooltip, /no agent sessions recorded in this workspace yet/);
  assert.equal(renderStatus(null).text, '$(history) Agent sessions');
  assert.match(renderStatus(null, { count: '5', allWorkspaces: true }).tooltip, /5 agent sessions in all workspaces/);
  assert.equal(renderStatus(null).command, PICK);
});

test('starting and failed servers say so; a failed one names the cause and clicks through to the fix', () => {
  assert.equal(renderStatus(null, { phase: 'starting' }).text, '$(sync~spin) Agent sessions');
  const failed = renderStatus(null, { phase: 'failed', problem: "`python3` lacks the `sessionkeeper` package" });
  assert.equal(failed.text, '$(debug-disconnect) Agent sessions: server not running');
  assert.match(failed.tooltip, /lacks the `sessionkeeper` package/);
  assert.equal(failed.command, FIX);
  assert.equal(failed.warning, true);
});

test('a current session shows its agent icon, title, branch, todos and tests', () => {
  const v = renderStatus(status());
  assert.equal(v.text, '$(history) Fix payment rounding  $(git-branch) fix/payment  $(checklist) 3/5  $(beaker) 7/9');
  assert.equal(v.warning, false);
  assert.match(renderStatus(status({ agent: 'codex' })).text, /^\$\(terminal\) /);
});

test('live drift turns the item into a warning with the branch move and the reason in the tooltip', () => {
  const v = renderStatus(status({
    state: 'drift', state_reason: 'branch fix/payment → main · 1 file changed outside',
    differences: [diff('branch', 'fix/payment', 'main'), diff('file_changed', { path: 'pay.py' }, { path: 'pay.py' }, 'pay.py changed outside the session')],
  }));
  assert.equal(v.text, '$(warning) Fix payment rounding  $(git-branch) fix/payment → main  $(checklist) 3/5  $(beaker) 7/9');
  assert.equal(v.warning, true);
  assert.match(v.tooltip, /⚠ Drift now: branch fix\/payment → main · 1 file changed outside/);
  assert.match(v.tooltip, /• Branch: fix\/payment → main/);
  assert.match(v.tooltip, /• File changed: pay\.py changed outside the session/);
});

test('a drift without a branch move shows its reason; stale tests say so', () => {
  const v = renderStatus(status({ state: 'drift', state_reason: 'HEAD abc1234 → def5678', invalidated: [{ subsystem: 'verifier', reason: 'pay.py changed after the tests ran' }] }));
  assert.match(v.text, /\$\(git-branch\) fix\/payment  HEAD abc1234 → def5678/);
  assert.match(v.text, /\$\(beaker\) 7\/9 \(stale\)$/);
  assert.match(v.tooltip, /Stale: verifier — pay\.py changed after the tests ran/);
});

test('a session resumed over drift still warns when no live check has run yet', () => {
  assert.equal(renderStatus(status({ state: null, drift: true, verdict: 'drift' })).warning, true);
  assert.match(renderStatus(status({ state: null, verdict: 'blocked' })).text, /^\$\(error\) /);
});

test('the controller renders into its item and follows status, phase and count', () => {
  const item: StatusItem & { shown: boolean } = { text: '', tooltip: '', command: undefined, backgroundColor: undefined, shown: false, show() { this.shown = true; } };
  const c = new StatusBarController(item, 'WARN');
  assert.equal(item.shown, true);
  assert.match(item.text, /sync~spin/);
  c.setPhase('running');
  c.setCount('2');
  assert.equal(item.text, '$(history) Agent sessions (2)');
  c.setStatus(status({ state: 'drift', state_reason: 'x' }));
  assert.equal(item.backgroundColor, 'WARN');
  c.setStatus(null);
  assert.equal(item.backgroundColor, undefined);
  c.setPhase('failed', 'no python');
  assert.equal(item.command, FIX);
  assert.match(String(item.tooltip), /no python/);
});
