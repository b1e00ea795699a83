/**
 * When a closed server connection is restarted: only a server that had been running, and at most
 * `maxRestarts` times per `windowMs`. A server that dies while starting is not retried in a loop.
 * Pure (clock injected) so it is unit-tested.
 */

export class RestartPolicy {
  private restarts: number[] = [];
  private running = false;

  constructor(
    private readonly maxRestarts = 3,
    private readonly windowMs = 3 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The server answered initialize. */
  markRunning(): void {
    this.running = true;
  }

  /** The connection closed: true to restart, false to give up (and say why). */
  shouldRestart(): { restart: boolean; reason?: string } {
    if (!this.running) return { restart: false, reason: 'the server exited while starting' };
    this.running = false;
    const t = this.now();
    this.restarts = this.restarts.filter((r) => t - r < this.windowMs);
    if (this.restarts.length >= this.maxRestarts) {
      return { restart: false, reason: `the server crashed ${this.maxRestarts + 1} times in ${Math.round(this.windowMs / 60_000)} minutes` };
    }
    this.restarts.push(t);
    return { restart: true };
  }
}
