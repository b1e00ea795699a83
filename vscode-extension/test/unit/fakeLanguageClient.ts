/**
 * A fake of vscode-languageclient for server.ts: imported FIRST by a test, it answers
 * `require('vscode-languageclient')`, `require('vscode-languageclient/node')` and `require('vscode')`
 * (both stay external in the test bundle, see scripts/build.mjs) with fakes. A FakeClient's
 * start waits until the test lets it (`release()`); its state changes are the real client's
 * public ones (Stopped 1, Running 2, Starting 3), a crash with a restart goes Stopped → Starting → Running.
 */

import Module from 'node:module';

export const State = { Stopped: 1, Running: 2, Starting: 3 } as const;
export const ErrorAction = { Continue: 1, Shutdown: 2 } as const;
export const CloseAction = { DoNotRestart: 1, Restart: 2 } as const;
export const TransportKind = { stdio: 0, ipc: 1, pipe: 2, socket: 3 } as const;

type Listener = (e: { oldState: number; newState: number }) => void;

export class FakeClient {
  static all: FakeClient[] = [];
  /** What session/current answers (per client, by default null). */
  static current: unknown = null;

  state: number = State.Stopped;
  started = false;
  disposed = false;
  readonly requests: string[] = [];
  private readonly listeners: Listener[] = [];
  private readonly handlers = new Map<string, (params: unknown) => void>();
  private gate: (() => void) | undefined;
  private readonly opened: Promise<void>;

  constructor(readonly id: string, readonly name: string, readonly serverOptions: unknown, readonly clientOptions: {
    errorHandler: { closed(): { action: number } | Promise<{ action: number }> };
  }) {
    FakeClient.all.push(this);
    this.opened = new Promise((resolve) => { this.gate = resolve; });
  }

  onNotification(method: string, handler: (params: unknown) => void): { dispose(): void } {
    this.handlers.set(method, handler);
    return { dispose: () => this.handlers.delete(method) };
  }

  onDidChangeState(listener: Listener): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => undefined };
  }

  /** Lets a pending start finish (the server answered initialize). */
  release(): void {
    this.gate?.();
  }

  async start(): Promise<void> {
    this.started = true;
    this.set(State.Starting);
    await this.opened;
    if (this.disposed) throw new Error('Client got disposed and can\'t be restarted.');
    this.set(State.Running);
  }

  isRunning(): boolean {
    return this.state === State.Running;
  }

  async stop(): Promise<void> {
    this.set(State.Stopped);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.set(State.Stopped);
  }

  async sendRequest(method: string): Promise<unknown> {
    this.requests.push(method);
    if (method === 'session/current') return FakeClient.current;
    return {};
  }

  /** The server sends a notification. */
  notify(method: string, params: unknown): void {
    this.handlers.get(method)?.(params);
  }

  /** The server process dies; the error handler decides, and a restart runs as the real client does. */
  async crash(): Promise<void> {
    const d = await this.clientOptions.errorHandler.closed();
    this.set(State.Stopped);
    if (d.action === CloseAction.Restart) {
      this.set(State.Starting);
      this.set(State.Running);
    }
  }

  private set(state: number): void {
    const old = this.state;
    this.state = state;
    if (old !== state) for (const l of this.listeners) l({ oldState: old, newState: state });
  }
}

/**
 * What `require('vscode')` answers: empty namespaces a test fills with what its module calls
 * (the bundle copies the top-level keys once, at import: add functions to these objects).
 */
export const vscode: Record<'window' | 'workspace' | 'commands' | 'extensions', Record<string, unknown>> = {
  window: {}, workspace: {}, commands: {}, extensions: {},
};

const fake = { State, ErrorAction, CloseAction, TransportKind, LanguageClient: FakeClient };
const M = Module as unknown as { _load(request: string, ...rest: unknown[]): unknown };
const load = M._load;
M._load = function (this: unknown, request: string, ...rest: unknown[]): unknown {
  if (request === 'vscode-languageclient' || request === 'vscode-languageclient/node') return fake;
  if (request === 'vscode') return vscode;
  return load.call(this, request, ...rest);
};
