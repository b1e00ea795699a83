/**
 * The Session Keeper LSP protocol as the extension uses it. Every wire shape is generated from the
 * server's handlers (`protocol.gen.ts`, from protocol/schema.json); this module adds only what
 * cannot be generated: the typed request function and the names of the notifications.
 */

import type { Notifications, Requests } from './protocol.gen';

export * from './protocol.gen';

export type RequestMethod = keyof Requests;
export type NotificationMethod = keyof Notifications;

/** Sends one typed request; implemented over the language client, faked in tests. */
export type Requester = <M extends RequestMethod>(method: M, params: Requests[M][0]) => Promise<Requests[M][1]>;

/** The current session changed (params: Status | null). */
export const DID_CHANGE: NotificationMethod = 'session/didChange';
