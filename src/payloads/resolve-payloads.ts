/**
 * @module payloads/resolve-payloads
 * Inlines {"$payload": …} references again (`?resolve=true`), within a byte budget per tape
 * (docs/architecture.md "Payload store"):
 * - Only references tapedeck wrote are followed: the whole value, or the tail of
 *   [system…, ref] (stored-reference.ts). Anything else shaped like a reference is the user's
 *   content and is returned as it is, so no one can make tapedeck read a payload by naming it.
 * - References are inlined in the order of the values given to resolve(), so the cut is a
 *   prefix: the first reference that does not fit, and every one after it, stays a
 *   reference, even a later one small enough to fit. Nothing is read after the cut.
 * - The budget counts payload bytes inlined, once per occurrence (it bounds the response).
 * - [system…, {"$payload": r}] (offload's system-instructions rule) resolves to the system
 *   messages followed by the list's own messages, as the request would have been inline.
 * - A payload that is missing, corrupt or not JSON stays a reference and is reported in
 *   `unreadable`; resolution goes on with the next one. A tape stays readable when one blob
 *   is lost, and the caller decides what to say about it. Errors of the store itself (the
 *   database is down) are thrown: retrying may cure them.
 * - References inside an inlined payload are not followed: offload never writes any.
 * `resolvedPartial` is true whenever any reference is left in the output, for either reason.
 */
import type { JsonValue } from '../json/json-value.js';
import { type PayloadStore, PayloadIntegrityError } from './payload-store.js';
import { storedReferenceOf } from './stored-reference.js';

export interface ResolveOptions {
  /** payload bytes that may be inlined in total; the first reference past it ends resolution */
  maxBytes: number;
  /** aborts between reads (the request's query deadline) with signal.reason */
  signal?: AbortSignal;
}

export type UnreadableReason = 'missing' | 'corrupt' | 'not_json';

export interface UnreadablePayload {
  ref: string;
  reason: UnreadableReason;
}

export interface ResolveResult {
  value: JsonValue | null;
  resolvedPartial: boolean;
  bytesResolved: number;
  unreadable: UnreadablePayload[];
}

/** One budget shared by successive resolve() calls: one resolver per tape, steps in order. */
export interface PayloadResolver {
  /** value with tapedeck's reference inlined; a value without one is returned as it is */
  resolve(value: JsonValue | null): Promise<JsonValue | null>;
  readonly resolvedPartial: boolean;
  readonly bytesResolved: number;
  /** each unreadable payload once, in the order met */
  readonly unreadable: readonly UnreadablePayload[];
}

/** Resolves one value with its own budget. */
export async function resolvePayloads(
  value: JsonValue | null,
  store: PayloadStore,
  options: ResolveOptions,
): Promise<ResolveResult> {
  const resolver = createPayloadResolver(store, options);
  const resolved = await resolver.resolve(value);
  return {
    value: resolved,
    resolvedPartial: resolver.resolvedPartial,
    bytesResolved: resolver.bytesResolved,
    unreadable: [...resolver.unreadable],
  };
}

export function createPayloadResolver(store: PayloadStore, options: ResolveOptions): PayloadResolver {
  const { maxBytes, signal } = options;
  if (!(maxBytes >= 0)) throw new RangeError(`maxBytes must be a non-negative number, got ${maxBytes}`);
  let bytesResolved = 0;
  let cut = false;
  let partial = false;
  const unreadable: UnreadablePayload[] = [];
  // Each payload is read once per resolver however often it repeats across steps; the bytes
  // are kept, not the parsed value, so every occurrence gets its own independent copy.
  const seen = new Map<string, Uint8Array | UnreadableReason>();
  const decoder = new TextDecoder('utf-8', { fatal: true });

  /** The payload's JSON, or undefined when the reference has to stay. */
  async function inline(ref: string): Promise<JsonValue | undefined> {
    if (cut) {
      partial = true;
      return undefined;
    }
    let entry = seen.get(ref);
    if (entry === undefined) {
      signal?.throwIfAborted();
      entry = await read(ref);
      seen.set(ref, entry);
      if (typeof entry === 'string') unreadable.push({ ref, reason: entry });
    }
    if (typeof entry === 'string') {
      partial = true;
      return undefined;
    }
    if (bytesResolved + entry.byteLength > maxBytes) {
      cut = true;
      partial = true;
      return undefined;
    }
    let value: JsonValue;
    try {
      value = JSON.parse(decoder.decode(entry)) as JsonValue;
    } catch {
      seen.set(ref, 'not_json');
      unreadable.push({ ref, reason: 'not_json' });
      partial = true;
      return undefined;
    }
    bytesResolved += entry.byteLength;
    return value;
  }

  async function read(ref: string): Promise<Uint8Array | UnreadableReason> {
    try {
      return (await store.get(ref)) ?? 'missing';
    } catch (error) {
      if (error instanceof PayloadIntegrityError) return 'corrupt';
      throw error;
    }
  }

  async function resolveStored(value: JsonValue): Promise<JsonValue> {
    const at = storedReferenceOf(value);
    if (at === null) return value;
    const inlined = await inline(at.ref);
    if (inlined === undefined) return value;
    if (at.head === null) return inlined;
    // [system…, ref] whose payload is a list: its messages follow the system messages, the
    // shape the request had before offloading split it.
    return Array.isArray(inlined) ? [...at.head, ...inlined] : [...at.head, inlined];
  }

  return {
    resolve: async (value) => (value === null ? null : resolveStored(value)),
    get resolvedPartial() {
      return partial;
    },
    get bytesResolved() {
      return bytesResolved;
    },
    get unreadable() {
      return unreadable;
    },
  };
}
