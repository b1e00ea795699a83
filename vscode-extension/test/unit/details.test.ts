import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detailsMessage, renderDetailsHtml, renderTimelineRow } from '../../src/ui/details';
import { page, pageMessage } from '../../src/ui/html';
import { diff, entry, NOW, report, shown, thread } from './fixtures';

test('a file change row has a clickable path, Open diff, Rewind file… and Rewind to here…', () => {
  const row = renderTimelineRow(entry({ seq: 12, type: 'file_change', path: 'src/pay.py', author: 'agent', summary: 'src/pay.py by agent' }));
  assert.match(row, /data-cmd="openFile" data-args="\{&quot;path&quot;:&quot;src\/pay\.py&quot;\}"/);
  for (const cmd of ['openDiff', 'rewindFile', 'rewindTo']) assert.match(row, new RegExp(`data-cmd="${cmd}"`));
  const plain = renderTimelineRow(entry({ seq: 3 }));
  assert.doesNotMatch(plain, /openDiff|rewindFile/);
  assert.match(plain, /rewindTo/);
});

test('the details page shows summary, agent, state, the resume check and every subsystem', () => {
  const html = renderDetailsHtml(shown({ thread: thread({ agent: 'codex', model: 'gpt-5', state: 'drift', state_reason: 'branch a → b', current: true }) }),
    report({ verdict: 'drift', differences: [diff('branch', 'a', 'b')] }), NOW);
  assert.match(html, /<h1>Fix payment rounding<\/h1>/);
  assert.match(html, /Codex · gpt-5/);
  assert.match(html, /current session/);
  assert.match(html, /branch a → b/);
  assert.match(html, /<h2>A resume here<\/h2>/);
  assert.match(html, /<th>todos<\/th><td>3\/5 done/);
  assert.match(html, /data-cmd="changes"/);
});

test("an agent thread's details say whether its baseline is exact (our hook) or reconstructed (the agent's log)", () => {
  const hooked = renderDetailsHtml(shown({ thread: thread({ agent: 'codex', baseline: 'hook' }) }), undefined, NOW);
  assert.match(hooked, /<th>Baseline<\/th><td class="baseline-hook">exact — recorded by Session Keeper&#39;s hook/);
  const logged = renderDetailsHtml(shown({ thread: thread({ agent: 'claude', baseline: 'log' }) }), undefined, NOW);
  assert.match(logged, /<th>Baseline<\/th><td class="baseline-log">reconstructed from Claude Code&#39;s own log/);
  assert.doesNotMatch(logged, /exact — /);
  const native = renderDetailsHtml(shown({ thread: thread({ baseline: null }) }), undefined, NOW);
  assert.doesNotMatch(native, /<th>Baseline<\/th>/);
});

test('page messages are checked field by field; the page escapes and locks scripts to a nonce', () => {
  assert.deepEqual(detailsMessage({ cmd: 'openDiff', seq: 3, path: 'a.py' }), { cmd: 'openDiff', seq: 3, path: 'a.py' });
  assert.equal(detailsMessage({ cmd: 'openDiff', seq: '3', path: 'a.py' }), undefined);
  assert.equal(detailsMessage({ cmd: 'rm -rf' }), undefined);
  assert.equal(pageMessage('x'), undefined);
  const html = page({ title: '<t>', cspSource: 'vscode-webview:', nonce: 'N1', body: '' });
  assert.match(html, /script-src 'nonce-N1'/);
  assert.match(html, /<title>&lt;t&gt;<\/title>/);
  assert.match(html, /<script nonce="N1">/);
});
