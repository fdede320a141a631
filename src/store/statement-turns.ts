/**
 * @module store/statement-turns
 * Turns at a database that runs one statement at a time (PGlite), in arrival order. A
 * statement PGlite has started runs in WebAssembly, where neither a timer nor
 * `statement_timeout` (whose alarm is a timer too) fires until it ends; only replacing its
 * worker thread stops it (pglite-thread.ts). The statements waiting behind it are stopped
 * here: one whose signal aborts while it waits leaves the line at once and never runs, so
 * requests whose deadlines passed do not add their statements to the wait of everyone after
 * them.
 *
 * A waiter with a signal yields to the event loop once before it starts: the timers that came
 * due while the statement before it ran (a deadline's among them) fire first, and a deadline
 * that passed during that wait is seen.
 */

export class StatementTurns {
  private busy = false;
  private readonly waiting: { start: () => void; signal?: AbortSignal }[] = [];

  /** Runs `work` when its turn comes; rejects with the signal's reason if it aborts first. */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.busy || this.waiting.length > 0) {
      await this.wait(signal);
      if (signal) {
        await new Promise<void>((resolve) => setTimeout(resolve, 0));
        if (signal.aborted) {
          this.next();
          throw signal.reason;
        }
      }
    } else this.busy = true;
    try {
      return await work();
    } finally {
      this.next();
    }
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry = {
        signal,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Hands the turn to the first waiter, or frees it. */
  private next(): void {
    const first = this.waiting.shift();
    if (first) first.start();
    else this.busy = false;
  }
}
