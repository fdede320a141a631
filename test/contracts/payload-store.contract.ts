/**
 * The PayloadStore contract (docs/architecture.md "Payload store"), one suite for every backend. A
 * backend's test file calls describePayloadStoreContract with a factory; the factory also
 * says how to damage a stored payload in that backend, so the verification-on-read promise
 * is tested against real on-disk / in-table corruption rather than a mock.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidPayloadRefError, PayloadIntegrityError, type PayloadStore } from '../../src/payloads/payload-store.js';

export interface PayloadStoreHarness {
  store: PayloadStore;
  /** Overwrites the bytes stored under ref behind the store's back. */
  corrupt(ref: string, bytes: Uint8Array): Promise<void>;
  cleanup(): Promise<void>;
}

const text = (s: string) => new TextEncoder().encode(s);
const sha256Ref = (bytes: Uint8Array) => `sha256/${createHash('sha256').update(bytes).digest('hex')}`;
const UNKNOWN = `sha256/${'0'.repeat(64)}`;

export function describePayloadStoreContract(name: string, make: () => Promise<PayloadStoreHarness>): void {
  describe(`PayloadStore contract: ${name}`, () => {
    let harness: PayloadStoreHarness | undefined;
    const open = async () => (harness = await make());
    afterEach(async () => {
      await harness?.cleanup();
      harness = undefined;
    });

    it('names bytes "sha256/" plus the lower-case hex SHA-256 of the bytes', async () => {
      const { store } = await open();
      const bytes = text('{"role":"user","content":"Where is the station?"}');
      const ref = await store.put(bytes, 'application/json');
      expect(ref).toBe(sha256Ref(bytes));
      expect(ref).toMatch(/^sha256\/[0-9a-f]{64}$/);
    });

    it('returns exactly the bytes that were put, as a plain Uint8Array', async () => {
      const { store } = await open();
      const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) % 256);
      const ref = await store.put(bytes);
      const read = await store.get(ref);
      expect(Object.getPrototypeOf(read)).toBe(Uint8Array.prototype);
      expect(read).toEqual(bytes);
    });

    it('stores an empty payload', async () => {
      const { store } = await open();
      const ref = await store.put(new Uint8Array(0));
      expect(await store.get(ref)).toEqual(new Uint8Array(0));
    });

    it('stores only the bytes of a view into a larger buffer', async () => {
      const { store } = await open();
      const backing = text('xxxxpayloadyyyy');
      const view = backing.subarray(4, 11);
      const ref = await store.put(view);
      expect(ref).toBe(sha256Ref(text('payload')));
      expect(await store.get(ref)).toEqual(text('payload'));
    });

    it("keeps its own copy: changing the caller's buffer after put changes nothing stored", async () => {
      const { store } = await open();
      const bytes = text('original');
      const ref = await store.put(bytes);
      bytes.fill(0);
      expect(await store.get(ref)).toEqual(text('original'));
    });

    it('is idempotent: putting the same bytes again returns the same name and keeps them', async () => {
      const { store } = await open();
      const first = await store.put(text('same bytes'), 'text/plain');
      const second = await store.put(text('same bytes'), 'application/json');
      expect(second).toBe(first);
      expect(await store.get(first)).toEqual(text('same bytes'));
      expect(await store.put(text('other bytes'))).not.toBe(first);
    });

    it('reports has() before and after put and after delete', async () => {
      const { store } = await open();
      const ref = sha256Ref(text('held'));
      expect(await store.has(ref)).toBe(false);
      await store.put(text('held'));
      expect(await store.has(ref)).toBe(true);
      expect(await store.delete(ref)).toBe(true);
      expect(await store.has(ref)).toBe(false);
      expect(await store.get(ref)).toBeUndefined();
    });

    it('deletes once: a second delete says nothing was there, and a later put stores again', async () => {
      const { store } = await open();
      const ref = await store.put(text('erase me'));
      expect(await store.delete(ref)).toBe(true);
      expect(await store.delete(ref)).toBe(false);
      expect(await store.put(text('erase me'))).toBe(ref);
      expect(await store.get(ref)).toEqual(text('erase me'));
    });

    it('deleting one payload leaves the others', async () => {
      const { store } = await open();
      const a = await store.put(text('a'));
      const b = await store.put(text('b'));
      await store.delete(a);
      expect(await store.get(b)).toEqual(text('b'));
    });

    it('answers undefined / false for a well-formed name it does not hold', async () => {
      const { store } = await open();
      expect(await store.get(UNKNOWN)).toBeUndefined();
      expect(await store.has(UNKNOWN)).toBe(false);
      expect(await store.delete(UNKNOWN)).toBe(false);
    });

    it.each([
      ['upper-case hex', `sha256/${'A'.repeat(64)}`],
      ['another algorithm', `md5/${'0'.repeat(32)}`],
      ['a short digest', 'sha256/abc'],
      ['a path traversal', 'sha256/../../../etc/passwd'],
      ['a bare digest', '0'.repeat(64)],
    ])('rejects %s as InvalidPayloadRefError on get, has and delete', async (_label, ref) => {
      const { store } = await open();
      await expect(store.get(ref)).rejects.toBeInstanceOf(InvalidPayloadRefError);
      await expect(store.has(ref)).rejects.toBeInstanceOf(InvalidPayloadRefError);
      await expect(store.delete(ref)).rejects.toBeInstanceOf(InvalidPayloadRefError);
    });

    it('refuses to serve bytes that no longer hash to their name (PayloadIntegrityError)', async () => {
      const h = await open();
      const ref = await h.store.put(text('the real prompt'));
      await h.corrupt(ref, text('the real prompX'));
      const error = await h.store.get(ref).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PayloadIntegrityError);
      expect(error).toMatchObject({ ref, actualRef: sha256Ref(text('the real prompX')) });
      expect((error as Error).message).toContain(ref);
    });

    it('accepts concurrent puts of the same bytes: one name, intact bytes', async () => {
      const { store } = await open();
      const bytes = Uint8Array.from({ length: 256 * 1024 }, (_, i) => (i * 31) % 251);
      const refs = await Promise.all(Array.from({ length: 16 }, () => store.put(bytes, 'application/json')));
      expect(new Set(refs)).toEqual(new Set([sha256Ref(bytes)]));
      expect(await store.get(refs[0])).toEqual(bytes);
    });

    it('accepts concurrent puts of different bytes', async () => {
      const { store } = await open();
      const all = Array.from({ length: 24 }, (_, i) => text(`payload number ${i}`));
      const refs = await Promise.all(all.map((bytes) => store.put(bytes)));
      for (const [i, ref] of refs.entries()) expect(await store.get(ref)).toEqual(all[i]);
    });

    it('round-trips a 5 MiB payload', async () => {
      const { store } = await open();
      const bytes = new Uint8Array(5 * 1024 * 1024);
      for (let i = 0; i < bytes.length; i += 1) bytes[i] = (i * 2654435761) >>> 24;
      const ref = await store.put(bytes, 'application/json');
      expect(ref).toBe(sha256Ref(bytes));
      const read = await store.get(ref);
      expect(read?.byteLength).toBe(bytes.byteLength);
      expect(Buffer.from(read as Uint8Array).equals(Buffer.from(bytes))).toBe(true);
    });
  });
}
