/**
 * @module erasure/erasure-poll
 * Between calls, replicas on one database read each other's erasure notices once a second
 * (ErasureFeed.refresh), so a replay withdrawn by an erasure recorded elsewhere frees its
 * place and drops its content without waiting for its next call. Calls read them first
 * regardless; this only bounds how long withdrawn content stays in memory.
 */
import type { Logger } from '../logger.js';
import type { ErasureFeed } from './erasure-feed.js';

export const ERASURE_POLL_MS = 1_000;

export class ErasurePoll {
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(
    private readonly feed: ErasureFeed,
    private readonly logger: Logger,
    private readonly intervalMs = ERASURE_POLL_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    try {
      await this.feed.refresh();
      this.failing = false;
    } catch (error) {
      // once per outage: the database being away is logged by whatever else needs it
      if (!this.failing) this.logger.warn({ err: error }, "could not read other replicas' erasures");
      this.failing = true;
    }
  }
}
