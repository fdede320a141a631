/**
 * @module deadline/deadline
 * One budget per read request (`--query-deadline-ms`; docs/architecture.md "Read side").
 *
 * A request creates one `Deadline` when it arrives and hands it to everything it does:
 * database reads (through `signal`, which aborts when the budget runs out or the answer has
 * been sent), and pure computation (alignment, classification, explanation), which calls
 * `check()` as it goes — directly in coarse loops, through `checkEvery(n)` in tight ones.
 * When the budget is spent, `check()` throws `DeadlineExceeded`, an `ApiError` of type
 * `deadline_exceeded` (HTTP 400, errors.ts): retrying the same request against the same data
 * will not make it cheaper, so it is not a retryable error.
 *
 * "No work continues after the answer": the handler calls `release()` once it has answered
 * (in a `finally`), which aborts `signal` and makes every later `check()` throw, so a query
 * or loop still holding this deadline stops at its next check instead of running on.
 *
 * Time is read from a monotonic clock (`performance.now()` unless a test injects one); the
 * timer that aborts `signal` is `unref()`'d so it never keeps the process alive.
 */
import { defaultConfig } from '../config.js';
import { ApiError } from '../errors.js';

/** `--query-deadline-ms` when the operator sets nothing: the Config default (10 s). */
export const DEFAULT_QUERY_DEADLINE_MS: number = defaultConfig.queryDeadlineMs;

export const DEADLINE_ERROR_TYPE = 'deadline_exceeded';

/** The budget ran out (or the request was already answered) before the work finished. */
export class DeadlineExceeded extends ApiError {
  constructor(
    readonly budgetMs: number,
    /** what the request was doing when it was stopped, e.g. "aligning steps" */
    readonly stage: string | null,
    /** true when the request had already been answered (release() ran) */
    readonly afterAnswer = false,
  ) {
    super(
      DEADLINE_ERROR_TYPE,
      afterAnswer
        ? `the request was already answered; work${stage ? ` (${stage})` : ''} stopped`
        : `the request could not be answered within its ${budgetMs} ms budget (--query-deadline-ms)` +
            `${stage ? `; it was stopped while ${stage}` : ''}, rather than left running past it.` +
            ' Ask for less (smaller runs, fewer words) or raise --query-deadline-ms.',
    );
    this.name = 'DeadlineExceeded';
  }
}

export interface DeadlineOptions {
  /** monotonic milliseconds; tests inject a fake clock */
  now?: () => number;
  /** a signal that ends the request early (e.g. the client went away) */
  signal?: AbortSignal;
}

export class Deadline {
  readonly budgetMs: number;
  /** how many times check() ran: a probe for tests and metrics */
  checks = 0;
  private readonly now: () => number;
  private readonly expiresAt: number;
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private released = false;
  private lastStage: string | null = null;

  constructor(budgetMs: number, options: DeadlineOptions = {}) {
    if (!Number.isFinite(budgetMs) || budgetMs < 0) {
      throw new RangeError(`a deadline needs a budget of 0 ms or more, got ${budgetMs}`);
    }
    this.budgetMs = budgetMs;
    this.now = options.now ?? (() => performance.now());
    this.expiresAt = this.now() + budgetMs;
    this.timer = setTimeout(() => this.abort(new DeadlineExceeded(budgetMs, this.lastStage)), budgetMs);
    this.timer.unref?.();
    const parent = options.signal;
    if (parent) {
      if (parent.aborted) this.release();
      else parent.addEventListener('abort', () => this.release(), { once: true });
    }
  }

  /** Aborts when the budget runs out or the request has been answered: pass it to queries. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Milliseconds left, never negative; 0 once released. */
  remainingMs(): number {
    if (this.released) return 0;
    return Math.max(0, this.expiresAt - this.now());
  }

  /** True once the budget is spent or the request was answered. */
  expired(): boolean {
    return this.released || this.controller.signal.aborted || this.now() >= this.expiresAt;
  }

  /** Throws DeadlineExceeded (and aborts `signal`) when no budget is left. */
  check(stage?: string): void {
    this.checks++;
    if (stage !== undefined) this.lastStage = stage;
    if (!this.expired()) return;
    const failure = new DeadlineExceeded(this.budgetMs, stage ?? this.lastStage, this.released);
    this.abort(failure);
    throw failure;
  }

  /**
   * A ticker for tight loops: call it once per iteration; it reads the clock every `n`th
   * call, so the check costs nothing measurable while the loop still stops within n steps.
   */
  checkEvery(n: number, stage?: string): () => void {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`checkEvery needs n >= 1, got ${n}`);
    let count = 0;
    return () => {
      if (++count >= n) {
        count = 0;
        this.check(stage);
      }
    };
  }

  /**
   * Waits for `work`, but rejects with DeadlineExceeded the moment the budget runs out, so
   * the request is answered on time even when the work ignores `signal`. Whatever `work`
   * produces after that is dropped: the caller has moved on.
   */
  race<T>(work: Promise<T>, stage?: string): Promise<T> {
    try {
      this.check(stage);
    } catch (error) {
      // The work still runs; its failure, if it fails, has nobody left to hear it.
      work.catch(() => {});
      throw error;
    }
    const signal = this.controller.signal;
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.failureFor(stage));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(signal.aborted ? this.failureFor(stage) : error);
        },
      );
    });
  }

  /**
   * The request has been answered (or abandoned): abort `signal` so queries still running
   * stop, make every later check() throw, and clear the timer. Idempotent.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.abort(new DeadlineExceeded(this.budgetMs, this.lastStage, true));
  }

  private failureFor(stage: string | undefined): DeadlineExceeded {
    const reason: unknown = this.controller.signal.reason;
    if (reason instanceof DeadlineExceeded) return reason;
    return new DeadlineExceeded(this.budgetMs, stage ?? this.lastStage, this.released);
  }

  private abort(reason: DeadlineExceeded): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }
}

/** A deadline that starts now, from the `--query-deadline-ms` setting. */
export function startDeadline(budgetMs: number = DEFAULT_QUERY_DEADLINE_MS, options?: DeadlineOptions): Deadline {
  return new Deadline(budgetMs, options);
}
