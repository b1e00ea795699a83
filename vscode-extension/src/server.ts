/**
 * Owns the language client: probes the interpreter first (firstRun.ts), starts `<python> -m
 * sessionkeeper serve` (languageclient appends `--stdio`), forwards `session/didChange` and
 * `session/didChangeThreads`, sends typed requests, restarts (debounced).
 */

import { CloseAction, ErrorAction, State, WorkDoneProgress, WorkDoneProgressCancelNotification } from 'vscode-languageclient';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { classify, probeFor, type Problem } from './firstRun';
import { errorMessage } from './log';
import { DID_CHANGE, DID_CHANGE_THREADS, type AllRequests, type ProgressValue, type RequestMethod, type Status, type ThreadsChanged } from './protocol';
import { runProbe } from './python';
import { RestartPolicy } from './restartPolicy';
import type { Launch } from './settings';
import type { ServerPhase } from './ui/statusBar';
import type { Disposable, LogOutputChannel } from './vscodeapi';

export interface ServerHooks {
  /** Resolves the launch from the current settings (re-read on every start). */
  launch(): Promise<Launch>;
  /** Extra options for the server's `initialize` request. */
  initializationOptions(): Record<string, unknown>;
  workspace(): string | undefined;
  onStatus(status: Status | null): void;
  onPhase(phase: ServerPhase): void;
  onThreadsChanged(reason: string): void;
  /** What keeps the server from starting (undefined: it started, or the cause is unknown). */
  onProblem(problem: Problem | undefined): void;
}

/** The server cannot start, and why (from the first-run probe). */
export class StartProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

export class SessionServer implements Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  /** Counts stop()s: a start that began before the latest stop is superseded and starts nothing. */
  private stops = 0;

  constructor(private readonly log: LogOutputChannel, private readonly hooks: ServerHooks) {}

  /** Starts the server unless it is running or starting; resolves once initialized. */
  start(): Promise<LanguageClient> {
    if (!this.starting) {
      const starting = this.doStart().catch((err: unknown) => {
        if (this.starting === starting) this.starting = undefined;
        throw err;
      });
      this.starting = starting;
    }
    return this.starting;
  }

  /** A start overtaken by a stop (a restart meanwhile): it waits for the newer start instead. */
  private superseded(): Promise<LanguageClient> {
    if (this.disposed) return Promise.reject(new Error('the server was stopped while starting'));
    return this.start();
  }

  private async doStart(): Promise<LanguageClient> {
    const stops = this.stops;
    this.hooks.onPhase('starting');
    const launch = await this.hooks.launch();
    if (stops !== this.stops) return this.superseded();
    const cwd = this.hooks.workspace();
    const probe = probeFor(launch);
    if (probe) {
      const out = await runProbe(probe.command, probe.args, { env: { ...process.env, ...launch.env }, ...(cwd ? { cwd } : {}) });
      if (stops !== this.stops) return this.superseded();
      const problem = classify(launch.command, out);
      if (problem) {
        this.log.error(`Server not started: ${problem.message}. Probe: ${[probe.command, ...probe.args].join(' ')} → exit ${out.code ?? out.spawnError}; stderr: ${out.stderr.trim().split('\n').slice(-3).join(' | ')}`);
        this.hooks.onProblem(problem);
        this.hooks.onPhase('failed');
        throw new StartProblem(problem);
      }
    }
    this.hooks.onProblem(undefined);
    this.log.info(`Starting server (${launch.source}): ${[launch.command, ...launch.args, '--stdio'].join(' ')}`);
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      transport: TransportKind.stdio,
      options: { env: { ...process.env, ...launch.env }, ...(cwd ? { cwd } : {}) },
    };
    const policy = new RestartPolicy();
    let gaveUp = false;
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      initializationOptions: this.hooks.initializationOptions(),
      // A server that cannot even initialize (missing module, bad interpreter) is not retried in
      // a loop: start() rejects once, the status bar says so, and the user can restart.
      initializationFailedHandler: () => false,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          const d = policy.shouldRestart();
          if (!d.restart) {
            gaveUp = true;
            this.log.error(`Server connection closed; not restarting: ${d.reason}`);
            this.hooks.onPhase('failed');
          }
          return d.restart
            ? { action: CloseAction.Restart }
            : { action: CloseAction.DoNotRestart, message: `Session Keeper: ${d.reason}. See "Session Keeper: Open Log".` };
        },
      },
    };
    const client = new LanguageClient('sessionKeeper', 'Session Keeper', serverOptions, clientOptions);
    client.onNotification(DID_CHANGE, (status: Status | null) => this.hooks.onStatus(status ?? null));
    client.onNotification(DID_CHANGE_THREADS, (p: ThreadsChanged | null) => this.hooks.onThreadsChanged(p?.reason ?? 'changed'));
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) {
        policy.markRunning();
        this.hooks.onPhase('running');
      } else if (e.newState === State.Starting) {
        this.hooks.onPhase('starting');
      } else {
        // The current session died with its server: a restarted one has none until it says so.
        this.hooks.onStatus(null);
        this.hooks.onPhase(gaveUp ? 'failed' : 'stopped');
      }
    });
    this.client = client;
    const t0 = Date.now();
    try {
      await client.start();
      // With initializationFailedHandler=false start() can resolve although the server died.
      if (!client.isRunning()) throw new Error('the server exited while starting (see the log)');
    } catch (err) {
      if (stops !== this.stops) return this.superseded(); // stop() disposed it while it started
      this.log.error(`Server failed to start: ${errorMessage(err)}`);
      this.hooks.onPhase('failed');
      if (this.client === client) this.client = undefined;
      await client.dispose().catch(() => undefined);
      throw err;
    }
    this.log.info(`Server running (initialize took ${Date.now() - t0} ms)`);
    this.hooks.onPhase('running');
    void this.refreshStatus();
    return client;
  }

  /** Asks the server for the current session and pushes it to `onStatus`. */
  async refreshStatus(): Promise<void> {
    try {
      const client = await this.start();
      this.hooks.onStatus((await client.sendRequest<Status | null>('session/current', {})) ?? null);
    } catch (err) {
      this.log.warn(`session/current failed: ${errorMessage(err)}`);
    }
  }

  /** Sends one typed request, starting the server first when needed. */
  async request<M extends RequestMethod>(method: M, params: AllRequests[M][0]): Promise<AllRequests[M][1]> {
    let client = await this.start();
    if (client.state === State.Stopped) {
      // It crashed and was not restarted: a user action is worth one fresh start.
      await this.stop();
      client = await this.start();
    }
    this.log.debug(`→ ${method} ${JSON.stringify(params)}`);
    try {
      return await client.sendRequest<AllRequests[M][1]>(method, params);
    } catch (err) {
      this.log.error(`${method} failed: ${errorMessage(err)}`);
      throw err;
    }
  }

  /** Subscribes to the `$/progress` values the server sends for a work-done token of ours. */
  async onProgress(token: string, handler: (value: ProgressValue) => void): Promise<{ dispose(): void }> {
    const client = await this.start();
    return client.onProgress(WorkDoneProgress.type, token, (value) => handler(value as ProgressValue));
  }

  /** Tells the server the user cancelled the work of a token of ours. */
  cancelProgress(token: string): void {
    void this.client?.sendNotification(WorkDoneProgressCancelNotification.type, { token }).catch(() => undefined);
  }

  /** Stops the running server, if any. */
  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.starting = undefined;
    this.stops++;
    if (client) {
      try {
        if (client.state === State.Running) await client.stop(3000);
      } catch (err) {
        this.log.warn(`Stopping the server: ${errorMessage(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.hooks.onPhase('stopped');
  }

  /** Stops and starts again. */
  async restart(): Promise<void> {
    this.log.info('Restarting server');
    await this.stop();
    if (!this.disposed) await this.start();
  }

  /** Restarts once `delayMs` after the last call (settings changes come in bursts); `onFail` says why it failed. */
  restartDebounced(delayMs = 1000, onFail?: (err: unknown) => void): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restart().catch((err: unknown) => {
        this.log.error(`Restart failed: ${errorMessage(err)}`);
        onFail?.(err);
      });
    }, delayMs);
  }

  /** Stops for good (deactivate): a start still in flight starts no server afterwards. */
  async shutdown(): Promise<void> {
    this.disposed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.stop();
  }

  dispose(): void {
    void this.shutdown();
  }
}
