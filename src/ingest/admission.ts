/**
 * @module ingest/admission
 * Bounds the export requests being decoded or written at once, across both transports.
 * Past the bound a request is answered at once with a retryable "busy" error, so memory
 * stays bounded and the sender's retry queue holds the data.
 *
 * Of the requests admitted, only a few do their work (decode, write) at once; the others wait
 * their turn, in arrival order. One Node thread decodes and derives for all of them: more at
 * once only holds more decoded batches in memory (about twice their size each) for little more
 * throughput. The work capacity is counted in units: a request takes one, or three when it is
 * large (LARGE_REQUEST_BYTES) or says no size, so four small batches, or one large and one
 * small, are worked on at once. (bench/ingest.mjs and docs/benchmarks.md have the
 * measurements: two 17 MB batches at once peaked at about 300 MiB RSS for 10–18 % more
 * throughput than one at a time, which peaked at about 245 MiB.)
 *
 * A request's body (OTLP/HTTP) is read when its turn starts, except for one request at a time:
 * the first waiting request reads its body while it waits (read-ahead), so the transfer of the
 * next batch overlaps the work on the ones before it, where the database or the sender, not
 * this process, is the bottleneck. So a waiting request holds no more than the socket buffers,
 * but for that one body. Its turn starts the next one's read-ahead. A body that cannot be read
 * (too large, cut off) ends its request at once, turn or no turn.
 */
import { IngestError } from '../errors.js';

/** Work units available at once. */
export const DEFAULT_WORK_UNITS = 4;
/** A request announcing more than this (or nothing) takes three units. */
export const LARGE_REQUEST_BYTES = 4 * 1024 * 1024;

export interface Admission {
  /**
   * Runs work in its turn if the request is admitted, else throws IngestError('busy').
   * `sizeBytes` is the request's size as announced (Content-Length, the gRPC message), when
   * known. `read`, when given, reads the request's body: at the start of the turn, or ahead of
   * it (see the module comment); work gets what it resolved with.
   */
  run<T, B = undefined>(work: (body: B) => Promise<T>, sizeBytes?: number, read?: () => Promise<B>): Promise<T>;
  /** requests admitted: working or waiting their turn */
  readonly inflight: number;
  /** Resolves when no request is in flight (graceful shutdown). */
  drained(): Promise<void>;
}

/** The work units a request takes. */
export function workUnitsOf(sizeBytes: number | undefined): number {
  return sizeBytes === undefined || sizeBytes > LARGE_REQUEST_BYTES ? 3 : 1;
}

export function createAdmission(maxInflight: number, workUnits = DEFAULT_WORK_UNITS): Admission {
  let inflight = 0;
  let busyUnits = 0;
  let waiters: (() => void)[] = [];
  const turns: Turn[] = [];
  let readingAhead = false;
  const startTurns = (): void => {
    // In arrival order: a large request at the head is not overtaken by small ones.
    while (turns.length > 0 && busyUnits + turns[0].units <= workUnits) {
      const next = turns.shift()!;
      busyUnits += next.units;
      next.start();
    }
  };
  const offerReadAhead = (): void => {
    if (readingAhead) return;
    const first = turns.find((t) => t.readAhead);
    if (!first) return;
    readingAhead = true;
    const readAhead = first.readAhead!;
    first.readAhead = undefined;
    readAhead();
  };
  return {
    get inflight() {
      return inflight;
    },
    async run<T, B>(work: (body: B) => Promise<T>, sizeBytes?: number, read?: () => Promise<B>): Promise<T> {
      if (inflight >= maxInflight) {
        throw new IngestError('busy', `too many export requests in flight (limit ${maxInflight}); retry shortly`, { retryAfterSeconds: 1 });
      }
      inflight++;
      // A request never needs more than the whole capacity (a capacity of 1 runs one at a time).
      const units = Math.min(workUnitsOf(sizeBytes), workUnits);
      let started = false;
      let holdsReadAhead = false;
      let ahead: Promise<B> | undefined;
      let failAhead!: (error: unknown) => void;
      const aheadFailed = new Promise<never>((_, reject) => (failAhead = reject));
      aheadFailed.catch(() => {});
      const releaseReadAhead = (): void => {
        if (!holdsReadAhead) return;
        holdsReadAhead = false;
        readingAhead = false;
        offerReadAhead();
      };
      try {
        await new Promise<void>((resolve, reject) => {
          const turn: Turn = {
            units,
            start: () => {
              started = true;
              turn.readAhead = undefined;
              resolve();
            },
          };
          if (read) {
            turn.readAhead = () => {
              holdsReadAhead = true;
              ahead = read();
              ahead.catch(failAhead);
            };
          }
          aheadFailed.catch((error: unknown) => {
            if (started) return; // the turn came first: the failure surfaces below
            turns.splice(turns.indexOf(turn), 1);
            reject(error);
          });
          turns.push(turn);
          startTurns();
          offerReadAhead();
        });
      } catch (error) {
        releaseReadAhead();
        inflight--;
        notifyIfDrained();
        throw error;
      }
      // Working now: this body counts as working memory; the next waiting request may read ahead.
      releaseReadAhead();
      try {
        const body = ahead ?? (read ? read() : Promise.resolve(undefined as B));
        ahead = undefined; // the body is work's to drop once decoded
        return await work(await body);
      } finally {
        busyUnits -= units;
        startTurns();
        offerReadAhead();
        inflight--;
        notifyIfDrained();
      }
    },
    drained() {
      return inflight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };

  function notifyIfDrained(): void {
    if (inflight !== 0) return;
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  }
}

interface Turn {
  units: number;
  start: () => void;
  /** starts reading the body while waiting; absent once started, or without a body to read */
  readAhead?: () => void;
}
