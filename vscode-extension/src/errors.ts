/** The Logger interface logic modules receive, and readable messages for thrown values (pure). */

export interface Logger {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string | Error): void;
}

/** A readable message for any thrown value, including JSON-RPC errors (code + message). */
export function errorMessage(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; message?: unknown; data?: { error?: unknown } };
    const msg = typeof e.message === 'string' ? e.message : String(err);
    const name = typeof e.data?.error === 'string' ? `${e.data.error}, ` : '';
    return typeof e.code === 'number' ? `${msg} (${name}code ${e.code})` : msg;
  }
  return String(err);
}
