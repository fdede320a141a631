/**
 * @module ingest/admission
 * Bounds the export requests being decoded or written at once, across both transports.
 * Past the bound a request is answered at once with a retryable "busy" error, so memory
 * stays bounded and the sender's retry queue holds the data.
 *
 * Of the requests admitted, at most `maxWorking` do their work (read the body, decode, write)
 * at once; the others wait their turn, in arrival order, before reading their body, so a
 * waiting OTLP/HTTP request holds no more than the socket buffers. One Node thread does the
 * decoding and deriving for all of them, so more at once only holds more decoded batches in
 * memory (about twice the body size each) without storing any faster.
 */
import { IngestError } from '../errors.js';

/** Requests working at once by default (measured in bench/ingest.mjs; see docs/benchmarks.md). */
export const DEFAULT_MAX_WORKING = 2;

export interface Admission {
  /** Runs work if a slot is free, else throws IngestError('busy'). */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** requests admitted: working or waiting their turn */
  readonly inflight: number;
  /** Resolves when no request is in flight (graceful shutdown). */
  drained(): Promise<void>;
}

export function createAdmission(maxInflight: number, maxWorking = DEFAULT_MAX_WORKING): Admission {
  let inflight = 0;
  let working = 0;
  let waiters: (() => void)[] = [];
  const turns: (() => void)[] = [];
  const takeTurn = (): Promise<void> | undefined => {
    if (working < maxWorking) {
      working++;
      return undefined;
    }
    return new Promise<void>((resolve) => turns.push(resolve));
  };
  const passTurn = (): void => {
    const next = turns.shift();
    if (next) next(); // the turn passes on; `working` stays the same
    else working--;
  };
  return {
    get inflight() {
      return inflight;
    },
    async run(work) {
      if (inflight >= maxInflight) {
        throw new IngestError('busy', `too many export requests in flight (limit ${maxInflight}); retry shortly`, { retryAfterSeconds: 1 });
      }
      inflight++;
      try {
        const wait = takeTurn();
        if (wait) await wait;
        try {
          return await work();
        } finally {
          passTurn();
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
