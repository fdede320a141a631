/**
 * @module ingest/admission
 * Bounds the export requests being decoded or written at once, across both transports.
 * Past the bound a request is answered at once with a retryable "busy" error, so memory
 * stays bounded and the sender's retry queue holds the data.
 */
import { IngestError } from '../errors.js';

export interface Admission {
  /** Runs work if a slot is free, else throws IngestError('busy'). */
  run<T>(work: () => Promise<T>): Promise<T>;
  readonly inflight: number;
  /** Resolves when no request is in flight (graceful shutdown). */
  drained(): Promise<void>;
}

export function createAdmission(maxInflight: number): Admission {
  let inflight = 0;
  let waiters: (() => void)[] = [];
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
        return await work();
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
