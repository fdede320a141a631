import { describe, expect, it } from 'vitest';
import { chunkedBody } from '../../../src/http/chunked-body.js';

const streamOf = (body: Uint8Array | ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
  if (!(body instanceof ReadableStream)) throw new Error('expected a stream');
  return body;
};

describe('chunkedBody', () => {
  it('sends every chunk in order, the first two made before the event loop turns', async () => {
    const made: number[] = [];
    function* chunks() {
      for (let i = 0; i < 4; i++) {
        made.push(i);
        yield Buffer.from(`${i};`);
      }
    }
    const body = chunkedBody(chunks());
    expect(made).toEqual([0, 1]);
    expect(Buffer.from(await new Response(body).arrayBuffer()).toString()).toBe('0;1;2;3;');
  });

  it('is the one chunk itself when there is one, so that it goes with its length', () => {
    const only = Buffer.from('{"run":"r"}');
    expect(chunkedBody([only])).toBe(only);
    expect(chunkedBody([])).toHaveLength(0);
  });

  it('stops making chunks once the reader cancels', async () => {
    let made = 0;
    let returned = false;
    function* chunks() {
      try {
        for (;;) {
          made++;
          yield Buffer.from('x');
        }
      } finally {
        returned = true;
      }
    }
    const reader = streamOf(chunkedBody(chunks())).getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    const afterCancel = made;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(returned).toBe(true);
    expect(made).toBe(afterCancel);
  });

  it('throws before answering when the first chunks cannot be made, errors the stream after', async () => {
    function* failsAt(n: number) {
      for (let i = 0; i < n; i++) yield Buffer.from(`${i}`);
      throw new Error('cannot render');
    }
    expect(() => chunkedBody(failsAt(1))).toThrow('cannot render');
    const reader = streamOf(chunkedBody(failsAt(2))).getReader();
    expect((await reader.read()).value?.toString()).toBe('0');
    expect((await reader.read()).value?.toString()).toBe('1');
    await expect(reader.read()).rejects.toThrow('cannot render');
  });
});
