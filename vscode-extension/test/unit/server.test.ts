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

test('a restart while the server is still starting (settings changed) leaves one server, and the superseded start reports no failure', async () => {
  let firstLaunch: (l: Launch) => void = () => undefined;
  const { srv, phases } = server([new Promise((r) => { firstLaunch = r; })]);
  const first = srv.start().then(() => 'started', (err: unknown) => `failed: ${String(err)}`);
  await tick(); // resolving the interpreter (or probing it) takes a while
  const restarted = srv.restart();
  await tick();
  firstLaunch(LAUNCH);
  await tick();
  for (const c of FakeClient.all) c.release();
  await restarted;
  assert.equal(await first, 'started', 'the start the user (or activation) waits for is not reported as failed');
  await tick();
  const live = FakeClient.all.filter((c) => c.started && !c.disposed);
  assert.equal(live.length, 1, `one server process runs (started: ${FakeClient.all.filter((c) => c.started).length})`);
  assert.equal(phases.at(-1), 'running');
  assert.ok(!phases.includes('failed'));
});

test('shutting down (deactivate) while the server is still starting starts no server', async () => {
  let firstLaunch: (l: Launch) => void = () => undefined;
  const { srv, phases } = server([new Promise((r) => { firstLaunch = r; })]);
  const first = srv.start().then(() => 'started', (err: unknown) => `failed: ${String(err)}`);
  await tick(); // resolving the interpreter (or probing it) takes a while
  const down = srv.shutdown();
  firstLaunch(LAUNCH);
  await down;
  for (let i = 0; i < 5; i++) await tick();
  for (const c of FakeClient.all) c.release();
  await tick();
  assert.match(await first, /^failed: .*stopped while starting/);
  assert.equal(FakeClient.all.filter((c) => c.started && !c.disposed).length, 0, 'no server process runs after deactivate');
  assert.equal(phases.at(-1), 'stopped');
});
