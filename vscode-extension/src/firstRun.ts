/**
 * First run: before the language client starts `<python> -m sessionkeeper serve`, one quick probe
 * asks that interpreter whether it can (Python ≥ 3.10 with sessionkeeper and pygls importable).
 * When it cannot, the cause becomes ONE notification with the way out (install into that
 * interpreter, select another, open the settings) instead of a server that dies and three toasts.
 * Pure: the probe's output comes in, a Problem and its notice go out.
 */

import type { Launch } from './settings';

/** What running the probe printed (or why it could not run). */
export interface ProbeOutput {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The spawn error code (ENOENT: no such interpreter, EACCES, ...). */
  spawnError?: string;
}

export type Problem =
  | { kind: 'no_interpreter'; python: string; message: string }
  | { kind: 'missing_package'; python: string; module: string; message: string }
  | { kind: 'too_old'; python: string; version: string; message: string }
  | { kind: 'broken'; python: string; message: string };

export const MIN_PYTHON: [number, number] = [3, 10];

/** Prints the version, then imports what the server needs (the first failure names itself). */
export const PROBE_SCRIPT = 'import sys; print("%d.%d" % sys.version_info[:2]); sys.stdout.flush(); import sessionkeeper, pygls; print("ok")';

/** The probe to run for a launch: only a `<python> -m sessionkeeper ...` server is probed. */
export function probeFor(launch: Launch): { command: string; args: string[] } | undefined {
  const m = launch.args.indexOf('-m');
  if (m < 0 || launch.args[m + 1] !== 'sessionkeeper') return undefined;
  return { command: launch.command, args: [...launch.args.slice(0, m), '-c', PROBE_SCRIPT] };
}

/** The cause of a failed probe, or undefined when the interpreter can run the server. */
export function classify(python: string, out: ProbeOutput): Problem | undefined {
  if (out.spawnError) {
    const why = out.spawnError === 'ENOENT' ? 'was not found'
      : out.spawnError === 'TIMEOUT' ? 'did not answer within 20 s' : `cannot be run (${out.spawnError})`;
    return { kind: 'no_interpreter', python, message: `the Python interpreter \`${python}\` ${why}` };
  }
  const lines = out.stdout.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const version = lines[0] && /^\d+\.\d+$/.test(lines[0]) ? lines[0] : undefined;
  if (version) {
    const [major, minor] = version.split('.').map(Number) as [number, number];
    if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
      return { kind: 'too_old', python, version, message: `\`${python}\` is Python ${version}; Session Keeper needs Python ${MIN_PYTHON.join('.')} or newer` };
    }
  }
  if (out.code === 0 && lines.includes('ok')) return undefined;
  const missing = /No module named '([^']+)'/.exec(out.stderr);
  if (missing?.[1]) {
    const module = missing[1].split('.')[0] ?? missing[1];
    return { kind: 'missing_package', python, module, message: `\`${python}\` lacks the \`${module}\` package (No module named '${missing[1]}')` };
  }
  if (!version) return { kind: 'no_interpreter', python, message: `\`${python}\` did not run as Python (exit ${out.code ?? 'signal'}): ${lastLine(out.stderr) || 'no output'}` };
  return { kind: 'broken', python, message: `\`${python}\` cannot import Session Keeper: ${lastLine(out.stderr) || `exit ${out.code}`}` };
}

function lastLine(text: string): string {
  return text.trim().split(/\r?\n/).pop()?.trim() ?? '';
}

export type FixAction = 'install' | 'select' | 'settings' | 'log';

export interface Notice {
  message: string;
  /** Button label → what it does, in order. */
  buttons: { label: string; action: FixAction }[];
}

/** The one notification for a problem (`after`: what led to it, e.g. a settings change). */
export function problemNotice(problem: Problem, after?: string): Notice {
  const lead = after ? `Session Keeper: ${after}, the server did not start: ` : 'Session Keeper cannot start its server: ';
  const install = { label: `Install into ${problem.python}`, action: 'install' as const };
  const rest = [{ label: 'Select Interpreter', action: 'select' as const }, { label: 'Open Settings', action: 'settings' as const }];
  switch (problem.kind) {
    case 'missing_package':
      return { message: `${lead}${problem.message}.`, buttons: [install, ...rest] };
    case 'no_interpreter':
    case 'too_old':
      return { message: `${lead}${problem.message}.`, buttons: rest };
    case 'broken':
      return { message: `${lead}${problem.message}.`, buttons: [install, ...rest, { label: 'Open Log', action: 'log' }] };
  }
}

/** `<python> -m pip install --upgrade <spec>`, run in a terminal so the user sees it. */
export function installCommand(python: string, spec: string): { command: string; args: string[] } {
  return { command: python, args: ['-m', 'pip', 'install', '--upgrade', spec] };
}
