/**
 * What commands are called with, made safe: a tree row, a picker row, the details page, the API
 * (a thread id) or nothing (then the command asks). Anything else means "ask", never a crash.
 */

import type { ThreadSummary, TimelineEntry } from './protocol';

/** A thread as commands get it: from a tree row, the picker, the API (an id) or nothing (ask). */
export type ThreadArg = { thread_id: string; title?: string | null } | undefined;

/** Accepts a thread id, a ThreadSummary or a tree node; anything else (a Uri from a menu) means "ask". */
export function threadArg(a: unknown): ThreadArg {
  if (typeof a === 'string' && a) return { thread_id: a };
  if (!a || typeof a !== 'object') return undefined;
  const node = a as { kind?: unknown; thread?: unknown; thread_id?: unknown };
  if (node.thread && typeof node.thread === 'object') return threadArg(node.thread);
  if (typeof node.thread_id === 'string') return a as ThreadSummary;
  return undefined;
}

/** An event of a thread's timeline: from a tree row, the details page or a diff command. */
export function entryArg(a: unknown): { thread_id: string; seq: number; path?: string } | undefined {
  if (!a || typeof a !== 'object') return undefined;
  const node = a as { thread?: { thread_id?: unknown }; entry?: TimelineEntry; thread_id?: unknown; seq?: unknown; path?: unknown };
  if (node.entry && typeof node.thread?.thread_id === 'string' && typeof node.entry.seq === 'number') {
    return { thread_id: node.thread.thread_id, seq: node.entry.seq, ...(node.entry.path ? { path: node.entry.path } : {}) };
  }
  if (typeof node.thread_id === 'string' && typeof node.seq === 'number') {
    return { thread_id: node.thread_id, seq: node.seq, ...(typeof node.path === 'string' ? { path: node.path } : {}) };
  }
  return undefined;
}
