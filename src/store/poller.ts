/**
 * Work over the store's schedules, run every `intervalMs` (when `periodic`) and whenever asked. Runs may
 * overlap (what they take from the store is leased to one taker), so a slow run holds up only its own
 * work. `close` stops it and waits for the runs under way.
 */
export class Poller {
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;

  constructor(
    private readonly work: () => Promise<void>,
    intervalMs: number,
    readonly periodic: boolean,
  ) {
    if (periodic) {
      this.#timer = setInterval(() => void this.run(), intervalMs);
      this.#timer.unref();
    }
  }

  run(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const run = this.work().finally(() => this.#inFlight.delete(run));
    this.#inFlight.add(run);
    return run;
  }

  /** A run soon, for a periodic poller only (a short-lived command's queue sends nothing by itself). */
  kick(): void {
    if (this.periodic) queueMicrotask(() => void this.run());
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await Promise.all(this.#inFlight);
  }
}
