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
 * a request takes one, or two when it is large (LARGE_REQUEST_BYTES) or says no size, so four
 * small batches, two large ones, or one large and two small, are worked on at once.
 * Two large batches at once gave more throughput than one at a time, within the same memory
 * once the heap's growth is bounded (cli/serve.ts); docs/benchmarks.md has the figures.
 */
import { IngestError } from '../errors.js';

/** Work units available at once. */
export const DEFAULT_WORK_UNITS = 4;
/** A request announcing more than this (or nothing) takes two units. */
export const LARGE_REQUEST_BYTES = 4 * 1024 * 1024;

export interface Admission {
  /**
   * Runs work if a slot is free, else throws IngestError('busy'). `sizeBytes` is the request's
   * size as announced (Content-Length, the gRPC message), when known.
   */
  run<T>(work: () => Promise<T>, sizeBytes?: number): Promise<T>;
  /** requests admitted: working or waiting their turn */
  readonly inflight: number;
  /** Resolves when no request is in flight (graceful shutdown). */
  drained(): Promise<void>;
}

/** The work units a request takes. */
export function workUnitsOf(sizeBytes: number | undefined): number {
  return sizeBytes === undefined || sizeBytes > LARGE_REQUEST_BYTES ? 2 : 1;
}

export function createAdmission(maxInflight: number, workUnits = DEFAULT_WORK_UNITS): Admission {
  let inflight = 0;
  let busyUnits = 0;
  let waiters: (() => void)[] = [];
  const turns: { units: number; start: () => void }[] = [];
  const startTurns = (): void => {
    // In arrival order: a large request at the head is not overtaken by small ones.
    while (turns.length > 0 && busyUnits + turns[0].units <= workUnits) {
      const next = turns.shift()!;
      busyUnits += next.units;
      next.start();
    }
  };
  return {
    get inflight() {
      return inflight;
    },
    async run(work, sizeBytes) {
      if (inflight >= maxInflight) {
        throw new IngestError('busy', `too many export requests in flight (limit ${maxInflight}); retry shortly`, {
          retryAfterSeconds: 1,
        });
      }
      inflight++;
      // A request never needs more than the whole capacity (a capacity of 1 runs one at a time).
      const units = Math.min(workUnitsOf(sizeBytes), workUnits);
      try {
        await new Promise<void>((start) => {
          turns.push({ units, start });
          startTurns();
        });
        try {
          return await work();
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
