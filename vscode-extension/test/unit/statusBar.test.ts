import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderStatus, StatusBarController, type StatusItem } from '../../src/ui/statusBar';
import { status } from './fixtures';

test('status text shows title, branch, todos and tests', () => {
  const v = renderStatus(status());
  assert.equal(v.text, '$(history) Fix payment rounding  $(git-branch) fix/payment  $(checklist) 3/5  $(beaker) 7/9');
  assert.equal(v.warning, false);
});

test('status text says No session when there is none', () => {
  assert.equal(renderStatus(null).text, '$(history) No session');
});

test('status shows a warning icon and flag on drift', () => {
  const v = renderStatus(status({ drift: true, verdict: 'drift' }));
  assert.match(v.text, /^\$\(warning\) /);
  assert.equal(v.warning, true);
  assert.match(v.tooltip, /drift/);
});

test('status shows an error icon when blocked', () => {
  assert.match(renderStatus(status({ verdict: 'blocked' })).text, /^\$\(error\) /);
});

test('status omits tests when none ran and branch when detached', () => {
  const v = renderStatus(status({ tests: null, branch: null, todos: { done: 0, total: 0 } }));
  assert.equal(v.text, '$(history) Fix payment rounding');
});

test('long titles are clipped in the status bar but whole in the tooltip', () => {
  const title = 'x'.repeat(80);
  const v = renderStatus(status({ title }));
  assert.ok(v.text.includes('…'));
  assert.ok(v.tooltip.includes(title));
});

test('tooltip lists ids, todos, tests and cost', () => {
  const t = renderStatus(status()).tooltip;
  for (const s of ['Thread: 11111111-2222-4333-8444-555555555555', 'Todos: 3/5', 'Tests: 7/9', 'Cost: $1.23', 'Branch: fix/payment']) {
    assert.ok(t.includes(s), s);
  }
});

test('tooltip says plainly when there are no todos and no test run', () => {
  const t = renderStatus(status({ todos: { done: 0, total: 0 }, tests: null })).tooltip;
  assert.ok(t.includes('Tests: not run\n'), t);
  assert.ok(!t.includes('not run passed'), t);
  assert.ok(t.includes('Todos: ') && !t.includes('none done'), t);
});

test('server phases render without a session', () => {
  assert.match(renderStatus(null, 'starting').text, /sync~spin/);
  const failed = renderStatus(status(), 'failed');
  assert.match(failed.text, /debug-disconnect/);
  assert.equal(failed.warning, true);
});

test('controller updates the item on status and phase changes', () => {
  const item: StatusItem = { text: '', tooltip: '', command: undefined, backgroundColor: undefined, show() { this.text ||= 'shown'; } };
  const c = new StatusBarController(item, 'sessionKeeper.pickSession', 'WARN');
  assert.equal(item.command, 'sessionKeeper.pickSession');
  c.setPhase('running');
  assert.equal(item.text, '$(history) No session');
  c.setStatus(status({ drift: true }));
  assert.equal(item.backgroundColor, 'WARN');
  c.setStatus(status());
  assert.equal(item.backgroundColor, undefined);
  assert.equal(c.current?.title, 'Fix payment rounding');
});
