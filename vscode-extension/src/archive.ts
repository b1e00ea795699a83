/**
 * Archive with Undo: the thread is archived at once (it leaves the list) and the notification
 * offers Undo, which unarchives it. Both steps are logged. Pure over a Requester and a notifier.
 */

import type { Logger } from './errors';
import type { Requester } from './protocol';

export interface ArchiveDeps {
  request: Requester;
  notify(message: string, labels: string[]): Promise<string | undefined>;
  log: Logger;
}

export type ArchiveEnd = 'archived' | 'undone' | 'unarchived';

/** Archives a thread and offers Undo; resolves once the notification is answered or dismissed. */
export async function archiveWithUndo(deps: ArchiveDeps, thread: { thread_id: string; title?: string | null }): Promise<ArchiveEnd> {
  const name = thread.title || thread.thread_id;
  await deps.request('session/archive', { thread_id: thread.thread_id });
  deps.log.info(`Archived “${name}” (${thread.thread_id})`);
  const pick = await deps.notify(`Archived “${name}”: it no longer shows in the list.`, ['Undo']);
  if (pick !== 'Undo') return 'archived';
  await deps.request('session/unarchive', { thread_id: thread.thread_id });
  deps.log.info(`Undo: unarchived “${name}” (${thread.thread_id})`);
  void deps.notify(`Restored “${name}” from the archive.`, []);
  return 'undone';
}

/** Brings an archived thread back. */
export async function unarchive(deps: ArchiveDeps, thread: { thread_id: string; title?: string | null }): Promise<ArchiveEnd> {
  const name = thread.title || thread.thread_id;
  await deps.request('session/unarchive', { thread_id: thread.thread_id });
  deps.log.info(`Unarchived “${name}” (${thread.thread_id})`);
  void deps.notify(`Unarchived “${name}”.`, []);
  return 'unarchived';
}
