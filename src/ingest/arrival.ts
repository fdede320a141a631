/**
 * @module ingest/arrival
 * When an export request reached tapedeck: the `received_at` of the log records it carries.
 * An SDK that exports each record as it is emitted sends records of one instant (a model
 * call's system and user messages, stamped with the same millisecond) in requests of their
 * own, at once; only the order they arrived in says which came first. PostgreSQL's
 * transaction time would order them by which got a connection first instead.
 *
 * Wall-clock microseconds (timestamptz's resolution), strictly increasing within the process,
 * so two requests of one millisecond keep their order and never tie.
 */

let lastMicros = 0;

/** The arrival time of a request received now, as a timestamptz literal (ISO 8601, UTC). */
export function arrivalTime(): string {
  const micros = Math.max(Date.now() * 1000, lastMicros + 1);
  lastMicros = micros;
  const millis = Math.floor(micros / 1000);
  const fraction = String(micros % 1000).padStart(3, '0');
  return new Date(millis).toISOString().replace('Z', `${fraction}Z`);
}
