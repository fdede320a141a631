import { describe, expect, it } from 'vitest';
import { JsonBytesWriter } from '../../../src/json/json-bytes-writer.js';

/** Whether two chunks were written in the same memory (compared as a boolean: no dump of 64 KiB on failure). */
const sameMemory = (a: Uint8Array, b: Uint8Array): boolean => a.buffer === b.buffer;

describe('JsonBytesWriter', () => {
  it('takes a chunk once a chunk’s worth is written, writing on in a buffer handed back once there is one', () => {
    const w = new JsonBytesWriter(8);
    w.ascii('[1,2,3,');
    expect(w.full).toBe(false);
    w.ascii('4]');
    expect(w.full).toBe(true);
    const first = w.take();
    expect(first.toString()).toBe('[1,2,3,4]');
    w.raw('"é"');
    const second = w.take();
    w.recycle(first);
    w.ascii('null');
    const third = w.take(); // written before first came back
    w.ascii('true');
    const fourth = w.take();
    expect([first, second, third].map((c) => sameMemory(c, fourth))).toEqual([true, false, false]);
    expect([second, third, fourth].map(String)).toEqual(['"é"', 'null', 'true']);
  });

  it('leaves alone a chunk handed back twice, a buffer it did not make, and one grown for a large value', () => {
    const w = new JsonBytesWriter(8);
    w.ascii('a');
    const small = w.take();
    w.recycle(small);
    w.recycle(small);
    w.recycle(Buffer.allocUnsafe(8 + 64 * 1024));
    w.ascii('b');
    w.take();
    w.ascii('c');
    const reused = w.take();
    w.ascii('d');
    const after = w.take();
    expect([sameMemory(reused, small), sameMemory(after, small)]).toEqual([true, false]);
    w.value('x'.repeat(200 * 1024));
    const large = w.take();
    expect(large.length).toBe(200 * 1024 + 2);
    w.recycle(large);
    w.ascii('e');
    w.take();
    w.ascii('f');
    expect(sameMemory(w.take(), large)).toBe(false);
  });
});
