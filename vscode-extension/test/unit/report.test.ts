import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderOutcome, renderReportHtml, subsystemLines } from '../../src/ui/report';
import { diff, DRIFT, report } from './fixtures';

test('outcome of a clean resume is informational with the todos and verifier headlines', () => {
  const o = renderOutcome(report(), 'Fix payment');
  assert.equal(o.severity, 'info');
  assert.equal(o.message, 'Resumed “Fix payment”: restored to event 42, todos: 3/5 done, verifier: tests 7/9 passed.');
  assert.deepEqual(o.attention, []);
});

test('outcome of a resume over drift says it continued over the differences; a fork does not', () => {
  assert.equal(renderOutcome(DRIFT, 'T').attention[0], 'Continuing over 3 recorded differences (branch, head, file changed).');
  const f = renderOutcome(DRIFT, 'T', 'Forked');
  assert.equal(f.severity, 'info');
  assert.match(f.message, /^Forked “T”: /);
});

test('outcome flags in-doubt operations, stale verifier, other stale state, quarantine and hook failures', () => {
  const o = renderOutcome(report({
    in_doubt_operations: [{ operation_id: 'op-7', tool: 'shell', seq: 40 }], rerun_verifier: true,
    invalidated: [{ subsystem: 'verifier', reason: 'src/pay.py changed after the tests ran' }, { subsystem: 'model', reason: 'unknown model' }],
    quarantined: [{ session_id: 's', path: '/x.quarantine', bytes: 33 }],
    hook_failures: [{ hook: 'warmup', source: 'resume', error: 'timeout' }],
  }), 'T');
  assert.equal(o.severity, 'warning');
  assert.match(o.message, /verifier: tests 7\/9 passed \(stale\)/);
  assert.match(o.message, /5 items need attention/);
  assert.match(o.attention[0] ?? '', /op-7 \(shell, event 40\)/);
  assert.ok(o.attention.includes('model is stale: unknown model'));
});

test('every subsystem is listed generically; one named in invalidated is stale, even one the client never heard of', () => {
  const r = report({
    subsystems: { ...report().subsystems, telepathy: { summary: {}, headline: '3 thoughts' } },
    invalidated: [{ subsystem: 'telepathy', reason: 'mind changed' }, { subsystem: 'ghost', reason: 'gone' }],
  });
  assert.deepEqual(subsystemLines(r).map((l) => l.name), ['todos', 'verifier', 'cost', 'telepathy', 'ghost']);
  assert.deepEqual(subsystemLines(r).find((l) => l.name === 'telepathy'), { name: 'telepathy', headline: '3 thoughts', stale: 'mind changed' });
  assert.match(renderReportHtml(r, 'T'), /<th>telepathy<\/th><td>3 thoughts <span class="stale">— stale: mind changed<\/span>/);
});

test('the report page is titled by the thread, escapes what the server sent, and lists differences', () => {
  const html = renderReportHtml(report({ verdict: 'drift', differences: [diff('branch', '<b>x</b>', 'main')], notes: ['git checks skipped & why'] }), 'Fix <it>');
  assert.match(html, /<h1>Resume report — Fix &lt;it&gt;<\/h1>/);
  assert.match(html, /Branch: &lt;b&gt;x&lt;\/b&gt; → main/);
  assert.match(html, /git checks skipped &amp; why/);
  assert.doesNotMatch(html, /<b>x<\/b>/);
});
