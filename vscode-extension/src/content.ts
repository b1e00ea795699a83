/**
 * File content from the session's history: the versions a diff editor shows (`sessionkeeper-blob:`
 * documents fed by session/blob), Open diff of one change, Changes by the agent (a multi-file diff
 * of the whole thread), and Rewind with a preview (session/rewind dry_run, then for real, with
 * Undo). Pure flows over a Requester and an injected UI.
 */

import { plural } from './format';
import { errorMessage, type Logger } from './errors';
import { METHOD_NOT_FOUND, type FileDiff, type Requester, type RewindParams, type RewindResult, type RewindStep } from './protocol';

export const BLOB_SCHEME = 'sessionkeeper-blob';
const NO_FILE = 'none';

/** The document path of one version: `/<thread>/<hash or none>/<workspace-relative path>`. */
export function blobPath(threadId: string, hash: string | null, path: string): string {
  return `/${threadId}/${hash ?? NO_FILE}/${path.replace(/^\/+/, '')}`;
}

export function parseBlobPath(p: string): { threadId: string; hash: string | null; path: string } | undefined {
  const m = /^\/([^/]+)\/([^/]+)\/(.+)$/.exec(p);
  if (!m?.[1] || !m[2] || !m[3]) return undefined;
  return { threadId: m[1], hash: m[2] === NO_FILE ? null : m[2], path: m[3] };
}

/** The text of a version document: its content, empty for "no file", or why there is none. */
export async function blobText(request: Requester, docPath: string): Promise<string> {
  const at = parseBlobPath(docPath);
  if (!at) return `(not a Session Keeper version: ${docPath})\n`;
  if (!at.hash) return '';
  try {
    const blob = await request('session/blob', { thread_id: at.threadId, hash: at.hash });
    return blob.text ?? `(${at.path}: no text to show — ${blob.note ?? 'content not kept'})\n`;
  } catch (err) {
    return `(${at.path}: this version cannot be shown — ${errorMessage(err)})\n`;
  }
}

export interface ContentUi {
  blobUri(docPath: string): string;
  fileUri(absolutePath: string): string;
  diff(left: string, right: string, title: string): Promise<void>;
  changes(title: string, files: [string, string, string][]): Promise<void>;
  modal(severity: 'info' | 'warning', message: string, detail: string, labels: string[]): Promise<string | undefined>;
  notify(severity: 'info' | 'warning' | 'error', message: string, labels: string[]): Promise<string | undefined>;
}

export interface ContentDeps {
  request: Requester;
  ui: ContentUi;
  log: Logger;
}

/** A server without the content methods answers -32601: say so once, in words. */
async function unsupported<T>(deps: ContentDeps, what: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    if ((err as { code?: unknown }).code === METHOD_NOT_FOUND) {
      deps.log.warn(`${what}: the server does not offer it (method not found)`);
      await deps.ui.notify('warning', `Session Keeper: ${what} needs a newer server (it does not answer ${what === 'Rewind' ? 'session/rewind' : 'session/diff'}).`, []);
      return undefined;
    }
    throw err;
  }
}

function sideUri(ui: ContentUi, threadId: string, path: string, ref: FileDiff['before']): string {
  return ui.blobUri(blobPath(threadId, ref?.hash ?? null, path));
}

function who(d: FileDiff): string {
  const a = d.after ?? d.before;
  return a ? `${a.author}${a.seq !== null ? `, event ${a.seq}` : ''}` : 'no version';
}

/** Opens the diff editor on one change of a file: the version before event `seq` and at it. */
export async function openDiff(deps: ContentDeps, at: { thread_id: string; seq: number; path: string }): Promise<void> {
  const result = await unsupported(deps, 'Open diff', () => deps.request('session/diff', {
    thread_id: at.thread_id, to_seq: at.seq, path: at.path, ...(at.seq > 0 ? { from_seq: at.seq - 1 } : {}),
  }));
  if (!result) return;
  const d = result.files.find((f) => f.path === at.path) ?? result.files[0];
  if (!d) {
    await deps.ui.notify('info', `Session Keeper: no change of ${at.path} at event ${at.seq}.`, []);
    return;
  }
  if (d.note && !d.before?.available && !d.after?.available) {
    await deps.ui.notify('warning', `Session Keeper: no diff of ${d.path}: ${d.note}.`, []);
    return;
  }
  deps.log.info(`Open diff ${d.path} at event ${at.seq} of ${at.thread_id}`);
  await deps.ui.diff(sideUri(deps.ui, at.thread_id, d.path, d.before), sideUri(deps.ui, at.thread_id, d.path, d.after),
    `${d.path} (${who(d)})`);
}

/** Changes by the agent: every file the thread changed, before its first change → now, in one editor. */
export async function showChanges(deps: ContentDeps, at: { thread_id: string; title: string; workspace: string }): Promise<void> {
  const result = await unsupported(deps, 'Changes by the agent', () => deps.request('session/diff', { thread_id: at.thread_id }));
  if (!result) return;
  if (!result.files.length) {
    await deps.ui.notify('info', `Session Keeper: “${at.title}” recorded no file changes.`, []);
    return;
  }
  deps.log.info(`Changes by the agent of “${at.title}”: ${plural(result.files.length, 'file')}`);
  await deps.ui.changes(`Changes by the agent — ${at.title}`, result.files.map((d) => [
    deps.ui.fileUri(`${at.workspace.replace(/\/+$/, '')}/${d.path}`),
    sideUri(deps.ui, at.thread_id, d.path, d.before), sideUri(deps.ui, at.thread_id, d.path, d.after),
  ]));
}

const ACTION_WORD: Record<RewindStep['action'], string> = {
  restore: 'restore', delete: 'delete', unchanged: 'already as then', refused: 'refused', unavailable: 'cannot',
};

/** The preview of a rewind, one line per file, and how many files it would write or refuses. */
export function renderRewindPreview(r: RewindResult): { changes: number; refused: number; lines: string[] } {
  const changes = r.steps.filter((s) => s.action === 'restore' || s.action === 'delete').length;
  const refused = r.steps.filter((s) => s.action === 'refused').length;
  return { changes, refused, lines: r.steps.map((s) => `• ${s.path}: ${ACTION_WORD[s.action]}${s.reason ? ` — ${s.reason}` : ''}`) };
}

/**
 * Rewind with a preview: dry run, confirm, run, offer Undo. Files changed by someone else since
 * are refused; only an explicit "Rewind Anyway" forces them (their content is kept as a blob, so
 * Undo brings it back). `what` names the scope for humans.
 */
export async function rewindFlow(deps: ContentDeps, params: RewindParams & { to_seq: number }, what: string): Promise<RewindResult | undefined> {
  const preview = await unsupported(deps, 'Rewind', () => deps.request('session/rewind', { ...params, dry_run: true }));
  if (!preview) return undefined;
  const { changes, refused, lines } = renderRewindPreview(preview);
  if (!changes && !refused) {
    await deps.ui.modal('info', `Nothing to rewind: ${what} is as it was at event ${params.to_seq}, or cannot be restored.`, lines.join('\n'), []);
    return undefined;
  }
  const run = changes ? `Rewind ${plural(changes, 'File')}` : undefined;
  const force = refused ? `Rewind Anyway (${plural(refused, 'Changed File')} Too)` : undefined;
  const detail = ['What changes on disk:', ...lines, '',
    refused ? `${plural(refused, 'file')} changed outside the session since: “${force}” rewinds ${refused === 1 ? 'it' : 'them'} too and keeps that content, so Undo brings it back.` : '',
    'Files the session did not change are left alone; a rewind can be undone.'].filter(Boolean).join('\n');
  const labels = [run, force].filter((l): l is string => Boolean(l));
  const pick = await deps.ui.modal('warning', `Rewind ${what} to event ${params.to_seq}?`, detail, labels);
  deps.log.info(`Rewind ${what} to event ${params.to_seq} of ${params.thread_id}: preview ${plural(changes, 'change')}, ${refused} refused; ${pick ?? 'cancelled'}`);
  if (!pick) return undefined;
  if (pick === force) params = { ...params, force: true };
  const done = await deps.request('session/rewind', { ...params, dry_run: false });
  const written = done.steps.filter((s) => s.outcome === 'written' || s.outcome === 'deleted').length;
  const failed = done.steps.filter((s) => s.outcome === 'failed' || s.outcome === 'stale');
  deps.log.info(`Rewound ${what} to event ${params.to_seq}: ${written} written, ${failed.length} failed or stale`);
  const buttons = done.undo_available ? ['Undo'] : [];
  const msg = failed.length
    ? `Session Keeper: rewound ${plural(written, 'file')}; ${failed.map((s) => `${s.path} ${s.outcome}`).join(', ')}.`
    : `Session Keeper: rewound ${plural(written, 'file')} to event ${params.to_seq}.`;
  void deps.ui.notify(failed.length ? 'warning' : 'info', msg, buttons).then(async (b) => {
    if (b !== 'Undo') return;
    try {
      await deps.request('session/rewind', { thread_id: params.thread_id, undo: true });
      deps.log.info(`Undid the rewind of ${what}`);
      void deps.ui.notify('info', 'Session Keeper: rewind undone.', []);
    } catch (err) {
      deps.log.error(`Undo of the rewind failed: ${errorMessage(err)}`);
      void deps.ui.notify('error', `Session Keeper: undo failed: ${errorMessage(err)}`, []);
    }
  });
  return done;
}
