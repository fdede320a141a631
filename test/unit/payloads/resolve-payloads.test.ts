/**
 * resolvePayloads / createPayloadResolver: inlining references within a byte budget, as a
 * prefix, and what happens when a payload cannot be read (docs/architecture.md "Payload store").
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/json/canonical.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { createMemoryPayloadStore } from '../../../src/payloads/memory-payload-store.js';
import { offloadLargeValues } from '../../../src/payloads/offload.js';
import { createPayloadResolver, resolvePayloads } from '../../../src/payloads/resolve-payloads.js';
import type { PayloadStore } from '../../../src/payloads/payload-store.js';

const KiB = 1024;
const system = { role: 'system', content: 'You are a terse travel assistant.' };
const user = (content: string) => ({ role: 'user', content });

/** A memory store that counts reads and can be told to lose or damage a payload. */
function countingStore(
  entries = new Map<string, Uint8Array>(),
): PayloadStore & { reads: string[]; entries: Map<string, Uint8Array> } {
  const inner = createMemoryPayloadStore({ entries });
  const reads: string[] = [];
  return {
    ...inner,
    reads,
    entries,
    get: (ref) => {
      reads.push(ref);
      return inner.get(ref);
    },
  };
}

/** Resolves values in order with one resolver (one budget), as a tape's steps are. */
async function resolveAll(values: JsonValue[], store: PayloadStore, options: { maxBytes: number }) {
  const resolver = createPayloadResolver(store, options);
  const value: (JsonValue | null)[] = [];
  for (const v of values) value.push(await resolver.resolve(v));
  return {
    value,
    resolvedPartial: resolver.resolvedPartial,
    bytesResolved: resolver.bytesResolved,
    unreadable: [...resolver.unreadable],
  };
}

async function putJson(store: PayloadStore, value: JsonValue): Promise<{ ref: string; size: number }> {
  const bytes = Buffer.from(canonicalJson(value));
  return { ref: await store.put(bytes, 'application/json'), size: bytes.byteLength };
}

describe('resolvePayloads', () => {
  it('returns the original 300 KiB prompt from its offloaded form', async () => {
    const store = countingStore();
    const request = [system, user('x'.repeat(300 * KiB)), { role: 'assistant', content: 'ok' }];
    const { draft } = await offloadLargeValues({ kind: 'llm', request, response: null }, store, 256 * KiB);
    expect(draft.request).toEqual([system, { $payload: expect.stringMatching(/^sha256\//) }]);
    const result = await resolvePayloads(draft.request, store, { maxBytes: 8 * 1024 * KiB });
    // [system, ref] comes back as the system message followed by the list's own messages.
    expect(result.value).toEqual(request);
    expect(result).toMatchObject({ resolvedPartial: false, unreadable: [] });
    expect(result.bytesResolved).toBe(canonicalJson(request.slice(1)).length);
  });

  it('returns a value without references as it is, reading nothing', async () => {
    const store = countingStore();
    const value = { messages: [user('hi')], $payload: 'not a reference on its own' };
    const result = await resolvePayloads(value, store, { maxBytes: 0 });
    expect(result).toEqual({ value, resolvedPartial: false, bytesResolved: 0, unreadable: [] });
    expect(result.value).toBe(value);
    expect(store.reads).toEqual([]);
    expect((await resolvePayloads(null, store, { maxBytes: 0 })).value).toBeNull();
  });

  it('keeps a payload that is not a list as an element after the system messages', async () => {
    const store = countingStore();
    const { ref } = await putJson(store, user('one message, not a list'));
    const result = await resolvePayloads([system, { $payload: ref }], store, { maxBytes: 1e6 });
    expect(result.value).toEqual([system, user('one message, not a list')]);
  });

  it('follows only a reference offload writes: one anywhere else is content, and nothing is read', async () => {
    const store = countingStore();
    const a = await putJson(store, 'a'.repeat(100));
    const named = [
      { z: { $payload: a.ref } },
      [user('hi'), { $payload: a.ref }],
      [{ $payload: a.ref }],
      [system, { $payload: a.ref }, user('after')],
      { role: 'user', content: [{ type: 'text', text: { $payload: a.ref } }] },
    ];
    for (const value of named) {
      const result = await resolvePayloads(value as JsonValue, store, { maxBytes: 1e6 });
      expect(result).toEqual({ value, resolvedPartial: false, bytesResolved: 0, unreadable: [] });
    }
    expect(store.reads).toEqual([]);
    // the two places offload writes one
    expect((await resolvePayloads({ $payload: a.ref }, store, { maxBytes: 1e6 })).value).toBe('a'.repeat(100));
    expect((await resolvePayloads([system, { $payload: a.ref }], store, { maxBytes: 1e6 })).value).toEqual([
      system,
      'a'.repeat(100),
    ]);
  });
});

describe('the per-tape budget (resolved_partial)', () => {
  async function tape(store: PayloadStore) {
    const first = await putJson(store, [user('1'.repeat(100 * KiB))]);
    const second = await putJson(store, [user('2'.repeat(100 * KiB))]);
    const third = await putJson(store, [user('3'.repeat(1 * KiB))]);
    return { first, second, third, values: [first, second, third].map((p): JsonValue => ({ $payload: p.ref })) };
  }

  it('resolves a prefix: the first reference that does not fit and every later one stay references', async () => {
    const store = countingStore();
    const { first, third, values } = await tape(store);
    const resolver = createPayloadResolver(store, { maxBytes: 150 * KiB });
    const out = [];
    for (const value of values) out.push(await resolver.resolve(value));
    expect(out[0]).toEqual([user('1'.repeat(100 * KiB))]);
    expect(out[1]).toBe(values[1]);
    // Small enough to fit in what is left, but after the cut: stays a reference.
    expect(out[2]).toBe(values[2]);
    expect(resolver.resolvedPartial).toBe(true);
    expect(resolver.bytesResolved).toBe(first.size);
    expect(resolver.unreadable).toEqual([]);
    expect(store.reads).not.toContain(third.ref);
  });

  it('resolves everything when the budget equals the total exactly', async () => {
    const store = countingStore();
    const { first, second, third, values } = await tape(store);
    const result = await resolveAll(values, store, { maxBytes: first.size + second.size + third.size });
    expect(result.resolvedPartial).toBe(false);
    expect(result.bytesResolved).toBe(first.size + second.size + third.size);
  });

  it('with a zero budget resolves nothing and says so only when there was something to resolve', async () => {
    const store = countingStore();
    const { values } = await tape(store);
    expect(await resolveAll(values, store, { maxBytes: 0 })).toMatchObject({
      value: values,
      resolvedPartial: true,
      bytesResolved: 0,
    });
    expect((await resolvePayloads([user('inline')], store, { maxBytes: 0 })).resolvedPartial).toBe(false);
  });

  it('reads a repeated payload once but counts it once per occurrence, each a separate copy', async () => {
    const store = countingStore();
    const p = await putJson(store, [user('same')]);
    const result = await resolveAll([{ $payload: p.ref }, { $payload: p.ref }], store, { maxBytes: 10 * KiB });
    const [one, two] = result.value as JsonValue[];
    expect(one).toEqual(two);
    expect(one).not.toBe(two);
    expect(result.bytesResolved).toBe(2 * p.size);
    expect(store.reads).toEqual([p.ref]);
  });
});

describe('payloads that cannot be read', () => {
  it('leaves a missing payload as a reference, reports it once, and resolves the rest', async () => {
    const store = countingStore();
    const gone = await putJson(store, [user('erased')]);
    const kept = await putJson(store, [user('kept')]);
    await store.delete(gone.ref);
    const value = [{ $payload: gone.ref }, [system, { $payload: gone.ref }], { $payload: kept.ref }];
    const result = await resolveAll(value, store, { maxBytes: 1e6 });
    expect(result.value).toEqual([{ $payload: gone.ref }, [system, { $payload: gone.ref }], [user('kept')]]);
    expect(result.unreadable).toEqual([{ ref: gone.ref, reason: 'missing' }]);
    expect(result.resolvedPartial).toBe(true);
    expect(result.bytesResolved).toBe(kept.size);
  });

  it('reports corrupt bytes and bytes that are not JSON instead of throwing', async () => {
    const store = countingStore();
    const damaged = await putJson(store, 'damaged');
    store.entries.set(damaged.ref, Buffer.from('"tampered"'));
    const binaryRef = await store.put(Uint8Array.from([0xff, 0xfe, 0x00]));
    const textRef = await store.put(Buffer.from('plain text'));
    const result = await resolveAll(
      [damaged.ref, binaryRef, textRef].map((r) => ({ $payload: r })),
      store,
      { maxBytes: 1e6 },
    );
    expect(result.unreadable).toEqual([
      { ref: damaged.ref, reason: 'corrupt' },
      { ref: binaryRef, reason: 'not_json' },
      { ref: textRef, reason: 'not_json' },
    ]);
    expect(result.bytesResolved).toBe(0);
  });

  it('throws what the store throws for any other failure: retrying may cure it', async () => {
    const down = new Error('database unavailable');
    const store: PayloadStore = {
      ...createMemoryPayloadStore(),
      get: async () => {
        throw down;
      },
    };
    await expect(resolvePayloads({ $payload: `sha256/${'0'.repeat(64)}` }, store, { maxBytes: 1 })).rejects.toBe(down);
  });

  it("stops with the signal's reason once the deadline has passed", async () => {
    const store = countingStore();
    const p = await putJson(store, 'x');
    const controller = new AbortController();
    const deadline = new Error('query deadline exceeded');
    controller.abort(deadline);
    await expect(
      resolvePayloads({ $payload: p.ref }, store, { maxBytes: 1e6, signal: controller.signal }),
    ).rejects.toBe(deadline);
    expect(store.reads).toEqual([]);
  });

  it('rejects a negative or NaN budget', () => {
    expect(() => createPayloadResolver(countingStore(), { maxBytes: -1 })).toThrow(RangeError);
    expect(() => createPayloadResolver(countingStore(), { maxBytes: Number.NaN })).toThrow(RangeError);
  });
});
