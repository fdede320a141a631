/**
 * @module payloads/counted-payload-store
 * A payload store that counts its operations and their failures in the process's metrics
 * (tapedeck_payload_store_operations_total, tapedeck_payload_store_errors_total), by backend
 * and operation. A get or has that finds nothing is an operation, not an error: only a throw is.
 */
import type { Metrics } from '../metrics/metrics.js';
import type { PayloadStore } from './payload-store.js';

export function countPayloadStore(store: PayloadStore, backend: string, metrics: Metrics): PayloadStore {
  const counted =
    <A extends unknown[], R>(operation: string, run: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const labels = { backend, operation };
      metrics.payloadOperations.inc(labels);
      try {
        return await run(...args);
      } catch (error) {
        metrics.payloadErrors.inc(labels);
        throw error;
      }
    };
  return {
    put: counted('put', (bytes: Uint8Array, mediaType?: string) => store.put(bytes, mediaType)),
    get: counted('get', (ref: string) => store.get(ref)),
    has: counted('has', (ref: string) => store.has(ref)),
    delete: counted('delete', (ref: string) => store.delete(ref)),
  };
}
