/**
 * The Session Keeper LSP protocol as the extension uses it. Every wire shape is generated from the
 * server's handlers (`protocol-gen/*.gen.ts`, from protocol/schema.json, one file per role); this
 * module re-exports them all and adds only what cannot be generated: the typed request function
 * and the notification names.
 */

import type { Notifications, Requests } from './protocol-gen/methods.gen';

export * from './protocol-gen/content.gen';
export * from './protocol-gen/methods.gen';
export * from './protocol-gen/params.gen';
export * from './protocol-gen/report.gen';
export * from './protocol-gen/sessions.gen';

export type AllRequests = Requests;
export type RequestMethod = keyof Requests;
export type NotificationMethod = keyof Notifications;

/** Sends one typed request; implemented over the language client, faked in tests. */
export type Requester = <M extends RequestMethod>(method: M, params: Requests[M][0]) => Promise<Requests[M][1]>;

/** A `$/progress` value of a work-done token (the LSP's begin / report / end). */
export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  message?: string;
  percentage?: number;
}

/** The current session changed (params: Status | null). */
export const DID_CHANGE: NotificationMethod = 'session/didChange';
/** The listing changed (params: ThreadsChanged). */
export const DID_CHANGE_THREADS: NotificationMethod = 'session/didChangeThreads';

/** JSON-RPC "method not found": the server is older than this extension. */
export const METHOD_NOT_FOUND = -32601;
