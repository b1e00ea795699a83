/**
 * The interpreter: the ms-python extension's active one, when that extension is installed
 * (defensive: any missing piece of its API means "none from there" and we fall back to python3),
 * and the first-run probe that asks an interpreter whether it can run the server.
 */

import { execFile } from 'node:child_process';
import type { ProbeOutput } from './firstRun';
import type { Logger } from './log';
import { getExtension } from './vscodeapi';

interface PythonEnvironments {
  getActiveEnvironmentPath(resource?: unknown): { path: string } | undefined;
  resolveEnvironment(env: { path: string } | string): Promise<{ executable?: { uri?: { fsPath: string } } } | undefined>;
}

/** Absolute path of the active interpreter, or undefined. Never throws. */
export async function activeInterpreter(log: Logger): Promise<string | undefined> {
  const ext = getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = (ext.isActive ? ext.exports : await ext.activate()) as { environments?: PythonEnvironments } | undefined;
    const envs = api?.environments;
    const active = envs?.getActiveEnvironmentPath();
    if (!envs || !active) return undefined;
    const resolved = await envs.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch (err) {
    log.warn(`Could not ask the Python extension for its interpreter: ${String(err)}`);
    return undefined;
  }
}

/** Runs `command args` with a time limit and reports what it printed (never throws). */
export function runProbe(command: string, args: string[], options: { env: Record<string, string | undefined>; cwd?: string; timeoutMs?: number }): Promise<ProbeOutput> {
  return new Promise((resolve) => {
    execFile(command, args, { env: options.env, cwd: options.cwd, timeout: options.timeoutMs ?? 20_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const e = err as (Omit<NodeJS.ErrnoException, 'code'> & { code?: unknown; killed?: boolean }) | null;
      if (e?.killed) {
        resolve({ code: null, stdout: stdout ?? '', stderr: stderr ?? '', spawnError: 'TIMEOUT' });
        return;
      }
      if (e && typeof e.code === 'string') {
        resolve({ code: null, stdout: stdout ?? '', stderr: stderr ?? '', spawnError: e.code });
        return;
      }
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout: stdout ?? '', stderr: stderr ?? '' });
    });
  });
}
