import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentOptions, needsRestart, readSettings, resolveLaunch, sharedOptions, type ConfigGetter } from '../../src/settings';

const cfg = (o: Record<string, unknown>): ConfigGetter => ({ get: <T>(k: string) => o[k] as T | undefined });

test('defaults: python3 -m sessionkeeper serve, written durability, redaction on, no auto-resume', () => {
  const s = readSettings(cfg({}));
  assert.deepEqual(s, { pythonPath: '', serverCommand: [], storePath: '', durability: 'written', autoResume: false, redaction: true, installSpec: 'sessionkeeper',
    agents: ['codex', 'claude', 'hermes', 'openclaw'], codexHome: '', claudeHome: '', hermesHome: '', openclawHome: '', index: '' });
  const l = resolveLaunch(s);
  assert.equal(l.command, 'python3');
  assert.deepEqual(l.args, ['-m', 'sessionkeeper', 'serve']);
  assert.equal(l.env.SESSIONKEEPER_HOME, undefined);
  assert.equal(l.source, 'default');
});

test('interpreter order: serverCommand, then pythonPath, then the Python extension', () => {
  const both = readSettings(cfg({ pythonPath: '/py', serverCommand: ['/venv/bin/python', 'fake.py'] }));
  assert.deepEqual(resolveLaunch(both, { activeInterpreter: '/ext' }), { command: '/venv/bin/python', args: ['fake.py'], env: resolveLaunch(both).env, source: 'serverCommand' });
  assert.equal(resolveLaunch(readSettings(cfg({ pythonPath: '/py' })), { activeInterpreter: '/ext' }).command, '/py');
  assert.equal(resolveLaunch(readSettings(cfg({})), { activeInterpreter: '/ext' }).command, '/ext');
});

test('storePath becomes SESSIONKEEPER_HOME with ${workspaceFolder} and ~ expanded', () => {
  const s = readSettings(cfg({ storePath: '${workspaceFolder}/.sk', pythonPath: '~/py/bin/python' }));
  const l = resolveLaunch(s, { workspaceFolder: '/ws', userHome: '/home/u' });
  assert.equal(l.env.SESSIONKEEPER_HOME, '/ws/.sk');
  assert.equal(l.command, '/home/u/py/bin/python');
});

test('bad values fall back to defaults', () => {
  const s = readSettings(cfg({ durability: 'fsync', serverCommand: 'python', redaction: 'no', autoResume: 'yes' }));
  assert.equal(s.durability, 'written');
  assert.deepEqual(s.serverCommand, []);
  assert.equal(s.redaction, true);
  assert.equal(s.autoResume, false);
});

test('only server-relevant settings trigger a restart', () => {
  assert.equal(needsRestart((k) => k === 'sessionKeeper.storePath'), true);
  assert.equal(needsRestart((k) => k === 'sessionKeeper.autoResume'), false);
});

test('the agent settings become the typed initializationOptions agents / codexHome / claudeHome', () => {
  assert.deepEqual(agentOptions(readSettings(cfg({}))), { agents: ['codex', 'claude', 'hermes', 'openclaw'] });
  const s = readSettings(cfg({ agents: [' Codex ', 'codex', 7, ''], codexHome: '~/alt-codex', claudeHome: '${workspaceFolder}/.claude-cfg', hermesHome: '~/.hermes-alt' }));
  assert.deepEqual(agentOptions(s, { workspaceFolder: '/ws', userHome: '/home/u' }),
    { agents: ['codex'], codexHome: '/home/u/alt-codex', claudeHome: '/ws/.claude-cfg', hermesHome: '/home/u/.hermes-alt' });
});

test('an empty agent list turns every agent off; a value that is not a list reads both', () => {
  assert.deepEqual(agentOptions(readSettings(cfg({ agents: [] }))), { agents: [] });
  assert.deepEqual(readSettings(cfg({ agents: 'codex' })).agents, ['codex', 'claude', 'hermes', 'openclaw']);
  assert.deepEqual(readSettings(cfg({ agents: ['gemini'] })).agents, ['gemini']); // the server names what it does not know
});

test('a change of the agents or their homes restarts the server (the server reads them at start)', () => {
  for (const k of ['agents', 'codexHome', 'claudeHome', 'hermesHome', 'openclawHome']) assert.equal(needsRestart((x) => x === `sessionKeeper.${k}`), true, k);
});

test('the shared index setting becomes initializationOptions.index only when set, and restarts the server', () => {
  assert.deepEqual(sharedOptions(readSettings(cfg({}))), {});
  assert.deepEqual(sharedOptions(readSettings(cfg({ index: ' postgresql://ana@db.example/sk ' }))), { index: 'postgresql://ana@db.example/sk' });
  assert.equal(needsRestart((x) => x === 'sessionKeeper.index'), true);
});
