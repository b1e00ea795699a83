import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classify, installCommand, PROBE_SCRIPT, probeFor, problemNotice } from '../../src/firstRun';
import { resolveLaunch, readSettings } from '../../src/settings';

const launch = (o: Record<string, unknown>) => resolveLaunch(readSettings({ get: <T>(k: string) => o[k] as T | undefined }));

test('only a `-m sessionkeeper` server is probed, with the same interpreter and its leading args', () => {
  assert.deepEqual(probeFor(launch({ pythonPath: '/usr/bin/python3' })), { command: '/usr/bin/python3', args: ['-c', PROBE_SCRIPT] });
  assert.deepEqual(probeFor(launch({ serverCommand: ['/v/bin/python', '-X', 'utf8', '-m', 'sessionkeeper', 'serve'] })), { command: '/v/bin/python', args: ['-X', 'utf8', '-c', PROBE_SCRIPT] });
  assert.equal(probeFor(launch({ serverCommand: ['/v/bin/python', 'fake_server.py'] })), undefined);
});

test('an interpreter without the package is named with the cause, and offers Install first', () => {
  const p = classify('/usr/bin/python3', { code: 1, stdout: '3.11\n', stderr: "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'sessionkeeper'\n" });
  assert.deepEqual(p, { kind: 'missing_package', python: '/usr/bin/python3', module: 'sessionkeeper', message: "`/usr/bin/python3` lacks the `sessionkeeper` package (No module named 'sessionkeeper')" });
  const n = problemNotice(p!);
  assert.equal(n.message, "Session Keeper cannot start its server: `/usr/bin/python3` lacks the `sessionkeeper` package (No module named 'sessionkeeper').");
  assert.deepEqual(n.buttons.map((b) => b.label), ['Install into /usr/bin/python3', 'Select Interpreter', 'Open Settings']);
  assert.match(problemNotice(p!, 'after the settings change').message, /^Session Keeper: after the settings change, the server did not start: /);
});

test('a missing interpreter, an old Python and a broken install are told apart', () => {
  assert.equal(classify('python9', { code: null, stdout: '', stderr: '', spawnError: 'ENOENT' })?.message, 'the Python interpreter `python9` was not found');
  const old = classify('/py38', { code: 0, stdout: '3.8\nok\n', stderr: '' });
  assert.equal(old?.kind, 'too_old');
  assert.deepEqual(problemNotice(old!).buttons.map((b) => b.action), ['select', 'settings']);
  assert.equal(classify('/py', { code: 1, stdout: '3.11\n', stderr: "ModuleNotFoundError: No module named 'pygls'\n" })?.kind, 'missing_package');
  const broken = classify('/py', { code: 1, stdout: '3.11\n', stderr: 'ImportError: cannot import name x\n' });
  assert.deepEqual([broken?.kind, broken?.message], ['broken', '`/py` cannot import Session Keeper: ImportError: cannot import name x']);
  assert.equal(classify('/bin/false', { code: 1, stdout: '', stderr: '' })?.kind, 'no_interpreter');
  assert.equal(classify('/py', { code: null, stdout: '', stderr: '', spawnError: 'TIMEOUT' })?.message, 'the Python interpreter `/py` did not answer within 20 s');
});

test('a working interpreter is no problem', () => {
  assert.equal(classify('/py', { code: 0, stdout: '3.11\nok\n', stderr: '' }), undefined);
});

test('install runs pip of the very interpreter the server uses', () => {
  assert.deepEqual(installCommand('/usr/bin/python3', 'sessionkeeper'), { command: '/usr/bin/python3', args: ['-m', 'pip', 'install', '--upgrade', 'sessionkeeper'] });
});
