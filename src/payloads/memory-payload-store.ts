/**
 * @module payloads/memory-payload-store
 * An in-process payload store for tests of other modules. It keeps the port's whole
 * contract (names, idempotence, verification on read) so a test passing against it does not
 * pass by accident of a lax double.
 */
import { type PayloadStore, parsePayloadRef, payloadRefOf, verifyPayload } from './payload-store.js';

export interface MemoryPayloadStoreSettings {
  /**
   * The backing map, ref → bytes. Pass your own to look inside or to damage an entry (the
   * contract suite's corruption test); by default the store makes a private one.
   */
  entries?: Map<string, Uint8Array>;
}

export function createMemoryPayloadStore(settings: MemoryPayloadStoreSettings = {}): PayloadStore {
  const entries = settings.entries ?? new Map<string, Uint8Array>();
  return {
    async put(bytes) {
      const ref = payloadRefOf(bytes);
      // A copy: the caller may reuse its buffer, and a store must not change under it.
      if (!entries.has(ref)) entries.set(ref, Uint8Array.from(bytes));
      return ref;
    },
    async get(ref) {
      parsePayloadRef(ref);
      const bytes = entries.get(ref);
      return bytes === undefined ? undefined : verifyPayload(ref, Uint8Array.from(bytes), 'memory');
    },
    async has(ref) {
      parsePayloadRef(ref);
      return entries.has(ref);
    },
    async delete(ref) {
      parsePayloadRef(ref);
      return entries.delete(ref);
    },
  };
}
