import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartPolicy } from '../../src/restartPolicy';

test('a server that exits while starting is not restarted', () => {
  const p = new RestartPolicy();
  assert.deepEqual(p.shouldRestart(), { restart: false, reason: 'the server exited while starting' });
});

test('a crashed running server is restarted at most three times per window', () => {
  let now = 0;
  const p = new RestartPolicy(3, 1000, () => now);
  for (let i = 0; i < 3; i++) {
    p.markRunning();
    assert.equal(p.shouldRestart().restart, true);
  }
  p.markRunning();
  assert.equal(p.shouldRestart().restart, false);
  now = 5000;
  p.markRunning();
  assert.equal(p.shouldRestart().restart, true);
});

test('a restarted server that dies while starting again is not retried', () => {
  const p = new RestartPolicy();
  p.markRunning();
  assert.equal(p.shouldRestart().restart, true);
  assert.equal(p.shouldRestart().restart, false);
});
