/**
 * @module ingest/admission
 * Bounds the export requests being decoded or written at once, across both transports.
 * Past the bound a request is answered at once with a retryable "busy" error, so memory
 * stays bounded and the sender's retry queue holds the data.
 *
 * Of the requests admitted, only a few do their work (read the body, decode, write) at once;
 * the others wait their turn, in arrival order, before reading their body, so a waiting
 * OTLP/HTTP request holds no more than the socket buffers. One Node thread decodes and
 * derives for all of them: more at once only holds more decoded batches in memory (about
 * twice their size each) for little more throughput. The work capacity is counted in units:
 * a request takes one per UNIT_BYTES begun, so the bytes worked on at once stay bounded
 * whatever the sizes (four of up to 4 MiB, or two of up to 8), and three at most, so a larger
 * request (or one that says no size) goes with one small one, never with another: two large
 * ones gave more throughput, but took a deriving receiver past 300 MiB with 17 MB requests
 * (docs/benchmarks.md). The size that counts is the decoded one: a compressed body takes two
 * units until it is decoded, then gives back what it does not need, or waits, first in line
 * and holding no unit, until the units it needs are free.
 *
 * No wait is unbounded: a request whose turn has not come within the queue timeout (or its
 * gRPC deadline) is answered busy, and its sender retries; a cancelled gRPC call, or an
 * HTTP request whose connection closed, stops waiting. A gRPC request waits holding its whole message (grpc-js reads it before the
 * handler runs), so the bytes held by waiting requests are bounded too.
 */
import { IngestError } from '../errors.js';

/** Work units available at once. */
export const DEFAULT_WORK_UNITS = 4;
/**
 * Work units available at once with derive off: two large requests (or one and three small,
 * or three of up to 8 MiB), which a spans-only receiver holds under 300 MiB, and which
 * overlap one's decoding with the other's COPY.
 */
export const SPANS_ONLY_WORK_UNITS = 6;
/** A request takes a unit per UNIT_BYTES (as announced) begun, one at least. */
export const UNIT_BYTES = 4 * 1024 * 1024;
/**
 * What a request announcing more than two units' bytes (or nothing) takes: more than half of
 * DEFAULT_WORK_UNITS, so one at a time.
 */
const LARGE_REQUEST_UNITS = 3;
/** What a compressed request takes until it is decoded: one small request's and one more. */
const COMPRESSED_UNITS = 2;

/** What admission knows of a request before its turn. */
export interface AdmissionRequest {
  /** the request's size as announced (Content-Length, the gRPC message), when known */
  sizeBytes?: number;
  /** the announced size is of compressed bytes: the decoded size is not known until read */
  compressed?: boolean;
  /** bytes the request already holds while it waits (a gRPC message is read before its handler) */
  heldBytes?: number;
  /** ends the wait (a cancelled gRPC call, a sender's connection closed) */
  signal?: AbortSignal;
  /** waits at most this long (a gRPC call's own deadline), if sooner than the queue timeout */
  waitMs?: number;
}

/** The request's turn, given to its work. */
export interface Turn {
  /**
   * The decoded size, once known (a compressed request): resolves once the request holds the
   * units of its decoded size, at once when it is small (one unit given back).
   */
  decoded(bytes: number): Promise<void>;
}

export interface AdmissionSettings {
  /** how long a request may wait for its turn before it is answered busy */
  queueTimeoutMs: number;
  /** bytes that waiting requests may hold in memory together (gRPC messages) */
  maxHeldBytes: number;
}

export interface Admission {
  /**
   * Runs work in its turn. Throws IngestError('busy') when too many requests are in flight,
   * when waiting ones already hold maxHeldBytes, or when the turn has not come within the
   * queue timeout; IngestError('unavailable') when the signal ended the wait.
   */
  run<T>(work: (turn: Turn) => Promise<T>, request?: AdmissionRequest): Promise<T>;
  /** requests admitted: working or waiting their turn */
  readonly inflight: number;
  /** work units taken by requests in their turn */
  readonly unitsInUse: number;
  /** work units wanted by requests waiting their turn */
  readonly unitsWaiting: number;
  /** Resolves when no request is in flight (graceful shutdown). */
  drained(): Promise<void>;
}

/** The work units a request takes. */
export function workUnitsOf(sizeBytes: number | undefined): number {
  if (sizeBytes === undefined) return LARGE_REQUEST_UNITS;
  return Math.min(LARGE_REQUEST_UNITS, Math.max(1, Math.ceil(sizeBytes / UNIT_BYTES)));
}

const unbounded: AdmissionSettings = { queueTimeoutMs: 2 ** 31 - 1, maxHeldBytes: Number.POSITIVE_INFINITY };

export function createAdmission(
  maxInflight: number,
  workUnits = DEFAULT_WORK_UNITS,
  settings: Partial<AdmissionSettings> = {},
): Admission {
  const { queueTimeoutMs, maxHeldBytes } = { ...unbounded, ...settings };
  let inflight = 0;
  let busyUnits = 0;
  let heldBytes = 0;
  let waiters: (() => void)[] = [];
  interface Waiting {
    units: number;
    start: () => void;
  }
  const turns: Waiting[] = [];
  const startTurns = (): void => {
    // In arrival order: a large request at the head is not overtaken by small ones.
    while (turns.length > 0 && busyUnits + turns[0].units <= workUnits) {
      const next = turns.shift()!;
      busyUnits += next.units;
      next.start();
    }
  };
  /** Waits for the request's turn, or refuses it: held bytes over the bound, timeout, abort. */
  const turnFor = (units: number, request: AdmissionRequest): Promise<void> => {
    const waiting: Waiting = { units, start: () => {} };
    const turn = new Promise<void>((start) => {
      waiting.start = start;
    });
    turns.push(waiting);
    startTurns();
    if (!turns.includes(waiting)) return turn;
    const held = request.heldBytes ?? 0;
    if (held > 0 && heldBytes + held > maxHeldBytes) {
      turns.splice(turns.indexOf(waiting), 1);
      return Promise.reject(
        new IngestError(
          'busy',
          `export requests waiting their turn already hold ${heldBytes} bytes (limit ${maxHeldBytes}); retry shortly`,
          { retryAfterSeconds: 1 },
        ),
      );
    }
    heldBytes += held;
    const waitMs = Math.min(queueTimeoutMs, request.waitMs ?? queueTimeoutMs);
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        heldBytes -= held;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
      };
      const leave = (error: IngestError) => {
        const at = turns.indexOf(waiting);
        if (at < 0) return; // its turn came first
        turns.splice(at, 1);
        settle();
        reject(error);
        startTurns(); // a large request leaving the head may let smaller ones start
      };
      const onAbort = () =>
        leave(new IngestError('unavailable', 'the request was cancelled while waiting its turn; nothing was stored'));
      timer = setTimeout(
        () =>
          leave(
            new IngestError(
              'busy',
              waitMs < queueTimeoutMs
                ? `no turn to store this export request before its deadline (${waitMs} ms); retry shortly`
                : `no turn to store this export request within ${waitMs} ms (--queue-timeout-ms); retry shortly`,
              { retryAfterSeconds: 1 },
            ),
          ),
        waitMs,
      );
      if (request.signal?.aborted) onAbort();
      else request.signal?.addEventListener('abort', onAbort, { once: true });
      turn.then(() => {
        settle();
        resolve();
      });
    });
  };
  return {
    get inflight() {
      return inflight;
    },
    get unitsInUse() {
      return busyUnits;
    },
    get unitsWaiting() {
      return turns.reduce((sum, t) => sum + t.units, 0);
    },
    async run(work, request = {}) {
      if (inflight >= maxInflight) {
        throw new IngestError('busy', `too many export requests in flight (limit ${maxInflight}); retry shortly`, {
          retryAfterSeconds: 1,
        });
      }
      inflight++;
      try {
        // A request never needs more than the whole capacity (a capacity of 1 runs one at a time).
        const capped = (n: number) => Math.min(n, workUnits);
        let units = capped(request.compressed ? COMPRESSED_UNITS : workUnitsOf(request.sizeBytes));
        await turnFor(units, request);
        const turn: Turn = {
          async decoded(bytes) {
            const needed = capped(workUnitsOf(bytes));
            if (needed === units) return;
            // It gives its units back and takes what it needs first in line: at once when that
            // is fewer; when more, after the large request in work, if any. Holding no unit
            // while it waits, two compressed requests that turn out large never wait for each other.
            busyUnits -= units;
            units = 0;
            await new Promise<void>((start) => {
              turns.unshift({ units: needed, start });
              startTurns();
            });
            units = needed;
          },
        };
        try {
          return await work(turn);
        } finally {
          busyUnits -= units;
          startTurns();
        }
      } finally {
        inflight--;
        if (inflight === 0) {
          const ready = waiters;
          waiters = [];
          for (const w of ready) w();
        }
      }
    },
    drained() {
      return inflight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
}
