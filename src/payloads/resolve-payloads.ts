/**
 * @module payloads/resolve-payloads
 * Inlines {"$payload": …} references again (`?resolve=true`), within a byte budget per tape
 * (docs/architecture.md "Payload store"):
 * - References are inlined in reading order (values in the order given to resolve(); inside
 *   a value, arrays in order and object keys in sorted order, i.e. canonical order), so the
 *   cut is a prefix: the first reference that does not fit, and every one after it, stays a
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
import { type PayloadStore, PayloadIntegrityError, isPayloadRef } from './payload-store.js';
import { isSystemPrefixedRef } from './system-prefix.js';

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
  /** value with references inlined; unchanged parts are returned as the same objects */
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

  async function walk(value: JsonValue): Promise<JsonValue> {
    if (value === null || typeof value !== 'object') return value;
    if (isPayloadRef(value)) return (await inline(value.$payload)) ?? value;
    if (Array.isArray(value)) return walkArray(value);
    const keys = Object.keys(value);
    const results = new Map<string, JsonValue>();
    let changed = false;
    for (const key of [...keys].sort()) {
      const result = await walk(value[key]);
      results.set(key, result);
      changed ||= result !== value[key];
    }
    if (!changed) return value;
    // Keys keep their original order in the output; only the reading order is canonical.
    const out: { [key: string]: JsonValue } = {};
    for (const key of keys) out[key] = results.get(key) as JsonValue;
    return out;
  }

  async function walkArray(list: JsonValue[]): Promise<JsonValue[]> {
    const out: JsonValue[] = [];
    let changed = false;
    for (const item of list) {
      const result = await walk(item);
      changed ||= result !== item;
      out.push(result);
    }
    const tail = out[out.length - 1];
    // [system…, ref] whose payload was inlined as a list: splice the list's messages in after
    // the system messages, the shape the request had before offloading split it.
    if (isSystemPrefixedRef(list) && Array.isArray(tail)) return [...out.slice(0, -1), ...tail];
    return changed ? out : list;
  }

  return {
    resolve: async (value) => (value === null ? null : walk(value)),
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
