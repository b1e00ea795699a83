/**
 * The Session Keeper LSP protocol as the extension uses it. Every wire shape is generated from the
 * server's handlers (`protocol.gen.ts`, from protocol/schema.json); this module adds only what
 * cannot be generated: the typed request function, the notification names, and — until the
 * server on this branch has them — the content methods of contract.md (session/diff, session/blob,
 * session/rewind). When schema.json gains them, `Pending` must go: the build then fails on any
 * shape that differs.
 */

import type { Notifications, Requests } from './protocol.gen';

export * from './protocol.gen';

/** contract.md, rewind slice: a file version (available: its content is in the blob store). */
export interface VersionRef { seq: number | null; hash: string | null; author: string; available: boolean }
export interface FileDiff { path: string; before: VersionRef | null; after: VersionRef | null; unified: string | null; note: string | null }
export interface DiffParams { thread_id: string; from_seq?: number; to_seq?: number; path?: string }
export interface DiffResult { files: FileDiff[] }
export interface BlobParams { thread_id: string; hash: string }
export interface BlobResult { hash: string; text: string | null; size: number | null; note: string | null }
export interface RewindParams { thread_id: string; to_seq?: number; paths?: string[]; dry_run?: boolean; force?: boolean; undo?: boolean }
export interface RewindStep {
  path: string;
  action: 'restore' | 'delete' | 'unchanged' | 'refused' | 'unavailable';
  reason: string;
  outcome: string | null;
  before_hash: string | null;
  after_hash: string | null;
}
export interface RewindResult { steps: RewindStep[]; rewind_seq: number | null; undo_available: boolean }

/** Methods of contract.md that this branch's server does not answer yet (-32601 from it). */
type Missing<T> = { [K in keyof T as K extends keyof Requests ? never : K]: T[K] };
export type Pending = Missing<{
  'session/diff': [DiffParams, DiffResult];
  'session/blob': [BlobParams, BlobResult];
  'session/rewind': [RewindParams, RewindResult];
}>;

export type AllRequests = Requests & Pending;
export type RequestMethod = keyof AllRequests;
export type NotificationMethod = keyof Notifications;

/** Sends one typed request; implemented over the language client, faked in tests. */
export type Requester = <M extends RequestMethod>(method: M, params: AllRequests[M][0]) => Promise<AllRequests[M][1]>;

/** The current session changed (params: Status | null). */
export const DID_CHANGE: NotificationMethod = 'session/didChange';
/** The listing changed (params: ThreadsChanged). */
export const DID_CHANGE_THREADS: NotificationMethod = 'session/didChangeThreads';

/** JSON-RPC "method not found": the server is older than this extension. */
export const METHOD_NOT_FOUND = -32601;
