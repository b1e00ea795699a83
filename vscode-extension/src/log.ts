/**
 * The one log of the extension: a LogOutputChannel shared with the language client (server
 * stderr and traces land there too). Logic modules receive the small `Logger` interface (errors.ts).
 */

import { createLogOutputChannel, type LogOutputChannel } from './vscodeapi';

export { errorMessage, type Logger } from './errors';

let channel: LogOutputChannel | undefined;

/** The shared channel, created on first use. */
export function logChannel(): LogOutputChannel {
  channel ??= createLogOutputChannel('Session Keeper');
  return channel;
}
