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
