/**
 * The ms-python extension's active interpreter, when that extension is installed. Defensive:
 * any missing piece of its API means "no interpreter from there" and we fall back to python3.
 */

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
