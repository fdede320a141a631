import { describe, expect, it } from 'vitest';
import { chunkedBody } from '../../../src/http/chunked-body.js';

describe('chunkedBody', () => {
  it('sends every chunk in order, the first before the event loop turns', async () => {
    const made: number[] = [];
    function* chunks() {
      for (let i = 0; i < 4; i++) {
        made.push(i);
        yield Buffer.from(`${i};`);
      }
    }
    const body = chunkedBody(chunks());
    expect(made).toEqual([0]);
    expect(Buffer.from(await new Response(body).arrayBuffer()).toString()).toBe('0;1;2;3;');
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
    const reader = chunkedBody(chunks()).getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    const afterCancel = made;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(returned).toBe(true);
    expect(made).toBe(afterCancel);
  });

  it('errors the stream when making a chunk throws', async () => {
    function* chunks() {
      yield Buffer.from('a');
      throw new Error('cannot render');
    }
    const reader = chunkedBody(chunks()).getReader();
    expect((await reader.read()).value?.toString()).toBe('a');
    await expect(reader.read()).rejects.toThrow('cannot render');
  });
});
