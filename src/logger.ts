/**
 * @module logger
 * Structured logs through pino, one JSON line per event, to stderr. Components log start-up,
 * shutdown and aggregate counts, never one line per span.
 */
import { pino, destination, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export function createLogger(options: { level?: string; enabled?: boolean } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.TAPEDECK_LOG_LEVEL ?? 'info',
      enabled: options.enabled ?? true,
      base: { service: 'tapedeck' },
    },
    destination({ fd: 2, sync: false }),
  );
}

/** A logger that drops everything (tests, embedded exporter). */
export function silentLogger(): Logger {
  return pino({ enabled: false });
}

/**
 * A failure that can repeat for every span, or every poll, logged at most once per interval:
 * the first at once, the ones after it counted and logged together once the interval has
 * passed (a timer that does not hold the process open writes the last count).
 */
export class ThrottledLog<Example> {
  private count = 0;
  private example: Example | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly emit: (count: number, example: Example) => void,
    private readonly intervalMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  record(example: Example): void {
    this.count++;
    this.example = example;
    const wait = this.lastAt + this.intervalMs - this.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait).unref();
  }

  /** Logs what is counted and not logged yet (at shutdown, say). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.count === 0) return;
    const count = this.count;
    this.count = 0;
    this.lastAt = this.now();
    this.emit(count, this.example as Example);
  }
}
