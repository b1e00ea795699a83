/**
 * Reindex with one progress notification: the request carries a work-done token of ours, so the
 * server reports its rollouts done / total to it (instead of a progress of its own beside ours),
 * and Cancel in the notification cancels the rebuild (the previous index is kept). Pure over a
 * Requester, the client's progress channel and a notification.
 */

import type { Logger } from './errors';
import type { ProgressValue, ReindexResult, Requester } from './protocol';

export interface ReindexDeps {
  request: Requester;
  /** Subscribes to the `$/progress` values of `token`. */
  onProgress(token: string, handler: (value: ProgressValue) => void): Promise<{ dispose(): void }>;
  /** Tells the server the user cancelled the work of `token`. */
  cancel(token: string): void;
  /** A cancellable notification while `task` runs: `report` moves it, `onCancel` hears Cancel. */
  withProgress<R>(title: string, task: (report: (message: string, increment: number) => void, onCancel: (listener: () => void) => void) => Promise<R>): Thenable<R>;
  log: Logger;
  notify(severity: 'info' | 'warning', message: string): void;
}

let counter = 0;

/** Rebuilds the index; the counts, or undefined when the user cancelled it. */
export async function reindexFlow(deps: ReindexDeps): Promise<ReindexResult | undefined> {
  const token = `sessionkeeper-reindex-client-${Date.now()}-${++counter}`;
  let cancelled = false;
  const result = await deps.withProgress('Session Keeper: rebuilding the session index', async (report, onCancel) => {
    let shown = 0;
    const sub = await deps.onProgress(token, (value) => {
      if (value.kind === 'end') return;
      const at = Math.max(shown, Math.min(100, value.percentage ?? shown));
      report(value.message ?? '', at - shown);
      shown = at;
    });
    onCancel(() => {
      cancelled = true;
      deps.cancel(token);
    });
    try {
      return await deps.request('session/reindex', { workDoneToken: token });
    } catch (err) {
      if (cancelled) return undefined;
      throw err;
    } finally {
      sub.dispose();
    }
  });
  if (result === undefined) {
    deps.log.info('Reindex cancelled: the previous index is kept');
    return undefined;
  }
  const damaged = result.damaged ? `, ${result.damaged} damaged` : '';
  deps.log.info(`Reindexed: ${result.threads} threads, ${result.sessions} sessions${damaged}`);
  deps.notify(result.damaged ? 'warning' : 'info', `Session Keeper: indexed ${result.threads} threads and ${result.sessions} sessions${damaged}.`);
  return result;
}
