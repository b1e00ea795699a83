import { FakeClient } from './fakeLanguageClient'; // first: it answers the language client's require
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import type { Status } from '../../src/protocol';
import { SessionServer, type ServerHooks } from '../../src/server';
import type { Launch } from '../../src/settings';
import type { ServerPhase } from '../../src/ui/statusBar';
import type { LogOutputChannel } from '../../src/vscodeapi';
import { logger, status } from './fixtures';

const tick = () => new Promise((r) => setImmediate(r));

/** A launch without a probe (not `-m sessionkeeper`), so no interpreter is run. */
const LAUNCH: Launch = { command: '/fake/server', args: [], env: {}, source: 'serverCommand' };

function server(launches: Promise<Launch>[] = []) {
  const phases: ServerPhase[] = [];
  const statuses: (Status | null)[] = [];
  const hooks: ServerHooks = {
    launch: () => launches.shift() ?? Promise.resolve(LAUNCH),
    initializationOptions: () => ({}),
    workspace: () => undefined,
    onStatus: (s) => { statuses.push(s); },
    onPhase: (p) => { phases.push(p); },
    onThreadsChanged: () => undefined,
    onProblem: () => undefined,
  };
  const srv = new SessionServer(logger() as unknown as LogOutputChannel, hooks);
  return { srv, phases, statuses };
}

afterEach(() => {
  FakeClient.all = [];
  FakeClient.current = null;
});

test('after the server crashed and was restarted, the session of the dead server no longer shows as current', async () => {
  const { srv, statuses } = server();
  FakeClient.current = status();
  const started = srv.start();
  await tick();
  FakeClient.all[0]?.release();
  await started;
  await tick();
  assert.equal(statuses.at(-1)?.thread_id, status().thread_id);
  FakeClient.current = null;
  await FakeClient.all[0]?.crash();
  await tick();
  await tick();
  assert.equal(FakeClient.all.length, 1, 'the client restarts its own server');
  assert.equal(statuses.at(-1), null, 'the status bar no longer shows the session of the dead server as current');
});
