/**
 * @module recall/recall-indexer
 * When recall's backlog (backlog.ts) is indexed:
 *
 * - In the background, by every `tapedeck serve` that derives (not --derive off): ingest first. While this replica has
 *   export requests in flight, the indexer waits, unless the oldest backlog row has waited
 *   `--recall-max-lag-ms` (30 s): then it indexes while ingest runs, oldest first, until it is
 *   back under that lag, each row in a turn of ingest's own admission queue, so ingest admits
 *   less (and answers busy sooner) while the index is behind, rather than admitting more than
 *   it can keep indexed and paying the debt after an overload. Idle, it indexes as soon as a row is there. An OpenTelemetry
 *   exporter whose requests wait drops spans once its queue fills; an index a few seconds
 *   behind loses nothing, and catching up (below) hides it from recall.
 * - Before recall answers (catchUp): the rows written before the query came are indexed first,
 *   within half of the query's remaining budget; what is left is reported as unindexed steps.
 * - By `tapedeck reindex`, after each batch of traces (drain).
 *
 * Replicas share the backlog: each takes rows the others are not indexing (SKIP LOCKED).
 */
import type { Database } from '../store/database.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { Deadline } from '../deadline/deadline.js';
import type { Logger } from '../logger.js';
import { backlogSteps, indexBacklogRow, lastBacklogRow, oldestBacklogRow } from './backlog.js';

/** How often an idle indexer looks for rows other replicas or commands wrote. */
const IDLE_POLL_MS = 200;
/** How often an indexer waiting for ingest to pause looks again (at this process, not the database). */
const BUSY_POLL_MS = 50;
/** Pause after a failed attempt (database unreachable, say) before the next one. */
const RETRY_MS = 1_000;
/**
 * Rows indexed at once. A loop waits for PostgreSQL while it writes and finds words while
 * PostgreSQL waits; a second one fills those gaps and catches up faster at the same CPU per
 * step (docs/benchmarks.md, "Design facts behind the figures").
 */
const LOOPS = 2;

export interface RecallIndexerOptions {
  /** ingest is writing on this replica (export requests in flight) */
  busy: () => boolean;
  /** how long a backlog row may wait for ingest to pause */
  maxLagMs: number;
  /**
   * Runs indexing that is due while ingest is busy in a turn of ingest's own queue, so that
   * ingest admits less meanwhile and the index stays within its lag (default: runs at once).
   */
  turn?: <T>(work: () => Promise<T>) => Promise<T>;
  /** where failing and recovering are told (not every failed attempt: see FailureReport) */
  logger: Pick<Logger, 'warn' | 'info'>;
  /** while attempts keep failing, how often a line counts them; default one minute */
  reportEveryMs?: number;
}

/** Indexes rows until none is left up to `upTo`, or the signal aborts; resolves with the steps left. */
export async function indexUpTo(
  db: Database,
  payloads: PayloadStore,
  upTo: bigint,
  signal?: AbortSignal,
): Promise<number> {
  for (;;) {
    if (signal?.aborted) return backlogSteps(db, upTo);
    try {
      if ((await indexBacklogRow(db, payloads, { upTo, skipLocked: false, signal })) !== null) continue;
    } catch (error) {
      if (signal?.aborted) return backlogSteps(db, upTo);
      throw error;
    }
    // None taken: all done, or the row waited for was indexed by another transaction.
    const left = await backlogSteps(db, upTo);
    if (left === 0) return 0;
  }
}

/** Indexes every backlog row written so far (reindex, tests); resolves when none is left. */
export async function drainBacklog(db: Database, payloads: PayloadStore): Promise<void> {
  await indexUpTo(db, payloads, await lastBacklogRow(db));
}

/**
 * Indexes the rows written before now, within half of the deadline's remaining budget;
 * resolves with the steps left unindexed (0: recall sees every step stored before it began).
 * An attempt that fails (the payload store unreachable, say) ends the catching up: recall
 * answers from the index as it is and says what it could not search, rather than fail.
 */
export async function catchUp(db: Database, payloads: PayloadStore, deadline: Deadline): Promise<number> {
  const upTo = await deadline.race(lastBacklogRow(db), "reading recall's backlog");
  if (upTo === 0n) return 0;
  const signal = AbortSignal.any([
    deadline.signal,
    AbortSignal.timeout(Math.max(1, Math.floor(deadline.remainingMs() / 2))),
  ]);
  try {
    return await indexUpTo(db, payloads, upTo, signal);
  } catch {
    return deadline.race(backlogSteps(db, upTo), "reading recall's backlog");
  }
}

/** The background indexer of one serve process. */
export class RecallIndexer {
  private stopped = false;
  private readonly sleepers = new Set<() => void>();
  private loops: Promise<void>[] | null = null;
  private readonly failures: FailureReport;

  constructor(
    private readonly db: Database,
    private readonly payloads: PayloadStore,
    private readonly options: RecallIndexerOptions,
  ) {
    this.failures = new FailureReport(options.logger, options.reportEveryMs ?? 60_000);
  }

  start(): void {
    this.loops ??= Array.from({ length: LOOPS }, () => this.run());
  }

  /** Finishes the rows in progress (their transactions commit) and stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.sleepers) wake();
    await Promise.all(this.loops ?? []);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const oldest = await oldestBacklogRow(this.db);
        this.failures.succeeded();
        if (!oldest) {
          await this.sleep(IDLE_POLL_MS);
          continue;
        }
        const busy = this.options.busy();
        if (busy && oldest.ageMs < this.options.maxLagMs) {
          await this.whileBusy(this.options.maxLagMs - oldest.ageMs);
          continue;
        }
        const index = () => indexBacklogRow(this.db, this.payloads, { skipLocked: true });
        const taken = busy && this.options.turn ? await this.options.turn(index) : await index();
        // null: every row is being indexed by another replica; look again shortly
        if (taken === null) await this.sleep(IDLE_POLL_MS);
      } catch (error) {
        if (this.stopped) break;
        this.failures.failed(error);
        await this.sleep(RETRY_MS);
      }
    }
  }

  /**
   * Waits until ingest pauses or `ms` have passed, asking this process rather than the
   * database: while ingest runs, the database is not asked again until the lag is due.
   */
  private async whileBusy(ms: number): Promise<void> {
    const until = performance.now() + ms;
    while (!this.stopped && this.options.busy() && performance.now() < until) {
      await this.sleep(Math.min(BUSY_POLL_MS, until - performance.now()));
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }
}

/**
 * While the database is unreachable every attempt of every loop fails, about twice a second:
 * the change to failing is logged once (with the error), then at most once per interval a
 * count of the failed attempts since, and the recovery once.
 */
class FailureReport {
  private failing = false;
  private sinceReport = 0;
  private total = 0;
  private reportedAt = 0;

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    private readonly everyMs: number,
  ) {}

  failed(error: unknown): void {
    this.total++;
    this.sinceReport++;
    const now = performance.now();
    if (!this.failing) {
      this.failing = true;
      this.sinceReport = 0;
      this.reportedAt = now;
      this.logger.warn({ err: error }, 'could not index stored steps for recall; trying again every second');
    } else if (now - this.reportedAt >= this.everyMs) {
      this.logger.warn(
        { failures: this.sinceReport, err: error },
        `recall's indexer still failing: ${this.sinceReport} failed attempts since the last report`,
      );
      this.sinceReport = 0;
      this.reportedAt = now;
    }
  }

  succeeded(): void {
    if (!this.failing) return;
    this.logger.info({ failures: this.total }, `recall's indexer works again after ${this.total} failed attempts`);
    this.failing = false;
    this.total = 0;
    this.sinceReport = 0;
  }
}
