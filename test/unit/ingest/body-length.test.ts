/**
 * readBoundedBody with the length the request announced (Content-Length): the body is read
 * into one buffer of that size as it arrives; a body longer or shorter than announced is
 * still read whole and bounded exactly as without one.
 */
import { describe, expect, it } from 'vitest';
import { readBoundedBody } from '../../../src/ingest/body.js';

function streamOf(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

describe('readBoundedBody with an announced length', () => {
  const parts = () => [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fghij')];

  it('reads a body of the announced length', async () => {
    expect((await readBoundedBody(streamOf(...parts()), 100, 10)).toString()).toBe('abcdefghij');
  });

  it('reads a body longer than announced', async () => {
    expect((await readBoundedBody(streamOf(...parts()), 100, 4)).toString()).toBe('abcdefghij');
  });

  it('reads a body shorter than announced', async () => {
    expect((await readBoundedBody(streamOf(...parts()), 100, 50)).toString()).toBe('abcdefghij');
  });

  it('refuses a body over the bound whatever was announced', async () => {
    await expect(readBoundedBody(streamOf(...parts()), 9, 10)).rejects.toMatchObject({ kind: 'too_large' });
    await expect(readBoundedBody(streamOf(...parts()), 9, 5)).rejects.toMatchObject({ kind: 'too_large' });
  });
});
