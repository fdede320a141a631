/**
 * offloadLargeValues: which values move to the payload store, the stored form left behind,
 * and the digests, which describe the value as it came in, whatever was offloaded. Runs on the memory
 * backend; that the stored form and digests do not depend on the backend is checked in
 * test/integration/payloads-offload.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, digestOf } from '../../../src/json/canonical.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { createMemoryPayloadStore } from '../../../src/payloads/memory-payload-store.js';
import { offloadLargeValues } from '../../../src/payloads/offload.js';
import { type PayloadStore, payloadRefOf } from '../../../src/payloads/payload-store.js';
import { resolvePayloads } from '../../../src/payloads/resolve-payloads.js';

const KiB = 1024;
const THRESHOLD = 256 * KiB;
const system = { role: 'system', content: 'You are a terse travel assistant.' };
const bigUser = (kib = 300, tag = 'x') => ({ role: 'user', content: tag.repeat(kib * KiB) });
const answer = [{ role: 'assistant', content: 'Take the 5 bus.', finish_reason: 'stop' }];

/** A memory store that also records what was put, with its media type. */
function recordingStore(): PayloadStore & { puts: { ref: string; mediaType?: string; text: string }[] } {
  const inner = createMemoryPayloadStore();
  const puts: { ref: string; mediaType?: string; text: string }[] = [];
  return {
    ...inner,
    puts,
    async put(bytes, mediaType) {
      const ref = await inner.put(bytes, mediaType);
      puts.push({ ref, mediaType, text: Buffer.from(bytes).toString('utf8') });
      return ref;
    },
  };
}

describe('offloadLargeValues', () => {
  it('leaves values at or under the threshold alone and returns the same draft', async () => {
    const store = recordingStore();
    const draft = {
      kind: 'llm',
      model: 'gpt-4o',
      request: [system, { role: 'user', content: 'hi' }],
      response: answer,
    };
    const result = await offloadLargeValues(draft, store, THRESHOLD);
    expect(result.draft).toBe(draft);
    expect(result.payloads).toEqual([]);
    expect(store.puts).toEqual([]);
    expect(result.requestDigest).toBe(digestOf(draft.request));
    expect(result.responseDigest).toBe(digestOf(draft.response));
  });

  it('keeps null (content not recorded) as null with a null digest', async () => {
    const result = await offloadLargeValues({ kind: 'llm', request: null, response: null }, recordingStore(), 0);
    expect(result).toMatchObject({
      draft: { request: null, response: null },
      requestDigest: null,
      responseDigest: null,
      payloads: [],
    });
  });

  it('offloads a 300 KiB prompt as canonical JSON under the name of its inline digest', async () => {
    const store = recordingStore();
    const request = [bigUser()];
    const result = await offloadLargeValues({ kind: 'llm', request, response: answer }, store, THRESHOLD);
    const ref = `sha256/${digestOf(request)}`;
    expect(result.draft.request).toEqual({ $payload: ref });
    expect(result.draft.response).toBe(answer);
    expect(store.puts).toEqual([{ ref, mediaType: 'application/json', text: canonicalJson(request) }]);
    expect(result.payloads).toEqual([{ field: 'request', ref, sizeBytes: canonicalJson(request).length }]);
    // Digests describe the value, not the reference left in its place.
    expect(result.requestDigest).toBe(digestOf(request));
    expect(result.requestDigest).not.toBe(digestOf(result.draft.request));
  });

  it('offloads only past the threshold, measured in UTF-8 bytes of the canonical JSON', async () => {
    const at = (n: number) => 'a'.repeat(n - 2); // a JSON string's quotes count too
    const exact = await offloadLargeValues({ request: at(100), response: null }, recordingStore(), 100);
    expect(exact.payloads).toEqual([]);
    const over = await offloadLargeValues({ request: at(101), response: null }, recordingStore(), 100);
    expect(over.payloads).toHaveLength(1);
    // 60 two-byte characters: 62 characters of JSON but 122 bytes.
    const wide = await offloadLargeValues({ request: 'é'.repeat(60), response: null }, recordingStore(), 100);
    expect(wide.payloads).toHaveLength(1);
  });

  it('offloads a large response whole, request first in the list of payloads', async () => {
    const response = [{ role: 'assistant', content: 'y'.repeat(300 * KiB) }];
    const request = [bigUser()];
    const result = await offloadLargeValues({ kind: 'llm', request, response }, recordingStore(), THRESHOLD);
    expect(result.draft.response).toEqual({ $payload: `sha256/${digestOf(response)}` });
    expect(result.payloads.map((p) => p.field)).toEqual(['request', 'response']);
    expect([result.requestDigest, result.responseDigest]).toEqual([digestOf(request), digestOf(response)]);
  });

  describe('system instructions beside an offloaded message list', () => {
    it('stores [system message, reference to the rest] so the digest covers the system prompt', async () => {
      const store = recordingStore();
      const rest = [bigUser(), { role: 'assistant', content: 'ok' }];
      const result = await offloadLargeValues(
        { kind: 'llm', request: [system, ...rest], response: null },
        store,
        THRESHOLD,
      );
      expect(result.draft.request).toEqual([system, { $payload: `sha256/${digestOf(rest)}` }]);
      expect(store.puts.map((p) => p.text)).toEqual([canonicalJson(rest)]);
      expect(result.requestDigest).toBe(digestOf([system, ...rest]));

      const other = await offloadLargeValues(
        { kind: 'llm', request: [{ ...system, content: 'Be verbose.' }, ...rest], response: null },
        store,
        THRESHOLD,
      );
      expect(other.payloads[0].ref).toBe(result.payloads[0].ref);
      expect(other.requestDigest).not.toBe(result.requestDigest);
    });

    it('keeps every leading system message inline', async () => {
      const second = { role: 'system', content: 'Answer in French.' };
      const result = await offloadLargeValues(
        { kind: 'llm', request: [system, second, bigUser()], response: null },
        recordingStore(),
        THRESHOLD,
      );
      expect(result.draft.request).toEqual([system, second, { $payload: `sha256/${digestOf([bigUser()])}` }]);
    });

    it('stores the whole list when the system messages alone exceed the threshold', async () => {
      const hugeSystem = { role: 'system', content: 's'.repeat(300 * KiB) };
      const request = [hugeSystem, bigUser(10)];
      const result = await offloadLargeValues({ kind: 'llm', request, response: null }, recordingStore(), THRESHOLD);
      expect(result.draft.request).toEqual({ $payload: `sha256/${digestOf(request)}` });
    });

    it('stores the whole list when it is nothing but system messages', async () => {
      const request = [{ role: 'system', content: 's'.repeat(300 * KiB) }];
      const result = await offloadLargeValues({ kind: 'llm', request, response: null }, recordingStore(), THRESHOLD);
      expect(result.draft.request).toEqual({ $payload: `sha256/${digestOf(request)}` });
    });

    it('applies to llm requests only: a tool request is stored whole', async () => {
      const request: JsonValue = [system, bigUser()];
      const result = await offloadLargeValues({ kind: 'tool', request, response: null }, recordingStore(), THRESHOLD);
      expect(result.draft.request).toEqual({ $payload: `sha256/${digestOf(request)}` });
    });
  });

  it('stores content shaped like its own references whole, however small, so it reads back as it was', async () => {
    const store = recordingStore();
    const first = await offloadLargeValues(
      { kind: 'llm', request: [system, bigUser()], response: null },
      store,
      THRESHOLD,
    );
    const stored = first.draft.request as JsonValue[];
    const named = { $payload: (stored[1] as { $payload: string }).$payload };
    const cases: [string, JsonValue][] = [
      ['tool', named],
      ['llm', stored],
      ['llm', [system, system, named]],
    ];
    for (const [kind, value] of cases) {
      store.puts.length = 0;
      const again = await offloadLargeValues({ kind, request: value, response: value }, store, THRESHOLD);
      const expected = canonicalJson(value);
      expect(store.puts.map((p) => p.text)).toEqual([expected, expected]);
      const ref = { $payload: payloadRefOf(Buffer.from(expected)) };
      expect(again.draft).toMatchObject({ request: ref, response: ref });
      expect((await resolvePayloads(again.draft.request, store, { maxBytes: 1e6 })).value).toEqual(value);
    }
    // shaped like one only somewhere inside: kept inline as it is
    const inside = [system, { role: 'user', content: [{ type: 'text', text: named }] }];
    store.puts.length = 0;
    const kept = await offloadLargeValues({ kind: 'llm', request: inside, response: named.$payload }, store, THRESHOLD);
    expect(kept.draft.request).toBe(inside);
    expect(store.puts).toEqual([]);
  });

  it("carries the other fields through and never modifies the caller's draft", async () => {
    const request = [bigUser()];
    const draft = { kind: 'llm' as const, name: 'chat gpt-4o', tokens: { input: 3 }, request, response: null };
    const frozen = structuredClone(draft);
    const result = await offloadLargeValues(draft, recordingStore(), THRESHOLD);
    expect(draft).toEqual(frozen);
    expect(result.draft).toMatchObject({ kind: 'llm', name: 'chat gpt-4o', tokens: { input: 3 } });
  });

  it('rejects a negative or NaN threshold', async () => {
    await expect(offloadLargeValues({ request: null, response: null }, recordingStore(), -1)).rejects.toThrow(
      RangeError,
    );
    await expect(offloadLargeValues({ request: null, response: null }, recordingStore(), Number.NaN)).rejects.toThrow(
      RangeError,
    );
  });
});
