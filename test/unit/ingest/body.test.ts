/**
 * Reading an OTLP/HTTP body within --max-body-bytes (src/ingest/body.ts): the bound holds for
 * the bytes received and again for the inflated size, so a small gzip body cannot expand
 * past it; encodings other than gzip and identity are refused as unsupported.
 */
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../../src/errors.js';
import { decodeContentEncoding, readBoundedBody } from '../../../src/ingest/body.js';

function streamOf(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

async function failure(promise: Promise<unknown>): Promise<IngestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IngestError);
  return error as IngestError;
}

describe('readBoundedBody', () => {
  it('reads a body sent in several chunks', async () => {
    const body = await readBoundedBody(streamOf(Buffer.from('ab'), Buffer.from('cd'), Buffer.from('e')), 10);
    expect(body.toString()).toBe('abcde');
  });

  it('reads no body as an empty one', async () => {
    expect(await readBoundedBody(null, 10)).toEqual(Buffer.alloc(0));
  });

  it('accepts a body of exactly the limit and refuses one byte more as too large', async () => {
    expect((await readBoundedBody(streamOf(Buffer.alloc(6), Buffer.alloc(4)), 10)).length).toBe(10);
    const error = await failure(readBoundedBody(streamOf(Buffer.alloc(6), Buffer.alloc(5)), 10));
    expect(error.kind).toBe('too_large');
    expect(error.message).toBe(
      'request body received exceeds the 10-byte limit (--max-body-bytes); split the batch; nothing was stored',
    );
  });

  it('reads the Node request itself the same way, and stops reading it at the limit', async () => {
    expect((await readBoundedBody(Readable.from([Buffer.from('ab'), Buffer.from('cde')]), 10, 5)).toString()).toBe(
      'abcde',
    );
    // more than announced: still the whole body
    expect((await readBoundedBody(Readable.from([Buffer.from('abc'), Buffer.from('def')]), 10, 4)).toString()).toBe(
      'abcdef',
    );
    const incoming = Readable.from([Buffer.alloc(6), Buffer.alloc(5), Buffer.alloc(1)]);
    const error = await failure(readBoundedBody(incoming, 10));
    expect(error.kind).toBe('too_large');
    expect(incoming.destroyed).toBe(true);
  });

  it('cancels a web body it stops reading at the limit', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(Buffer.alloc(6));
      },
      cancel() {
        cancelled = true;
      },
    });
    expect((await failure(readBoundedBody(body, 10))).kind).toBe('too_large');
    expect(cancelled).toBe(true);
  });
});

describe('decodeContentEncoding', () => {
  const plain = Buffer.from('{"resourceSpans":[]}');

  it.each([undefined, '', 'identity', ' Identity '])(
    'passes the body through for Content-Encoding %j',
    async (encoding) => {
      expect(await decodeContentEncoding(encoding, plain, 1024)).toBe(plain);
    },
  );

  it.each(['gzip', 'x-gzip', 'GZIP'])('inflates Content-Encoding %j', async (encoding) => {
    expect(await decodeContentEncoding(encoding, gzipSync(plain), 1024)).toEqual(plain);
  });

  it.each(['br', 'deflate', 'zstd', 'gzip, br'])('refuses Content-Encoding %j as unsupported', async (encoding) => {
    const error = await failure(decodeContentEncoding(encoding, plain, 1024));
    expect(error.kind).toBe('unsupported_media_type');
    expect(error.message).toBe(`unsupported Content-Encoding ${JSON.stringify(encoding)}: send gzip or no encoding`);
  });

  it('refuses a gzip-labelled body that does not inflate as bad input', async () => {
    const error = await failure(decodeContentEncoding('gzip', plain, 1024));
    expect(error.kind).toBe('bad_input');
    expect(error.message).toMatch(/^Content-Encoding is gzip but the body does not inflate: .*; nothing was stored$/);
  });

  it('refuses a truncated gzip body as bad input', async () => {
    const whole = gzipSync(Buffer.alloc(2000, 'x'));
    expect((await failure(decodeContentEncoding('gzip', whole.subarray(0, whole.length - 8), 4096))).kind).toBe(
      'bad_input',
    );
  });

  it('accepts a body inflating to exactly the limit and refuses one inflating a byte past it', async () => {
    expect((await decodeContentEncoding('gzip', gzipSync(Buffer.alloc(4096)), 4096)).length).toBe(4096);
    const error = await failure(decodeContentEncoding('gzip', gzipSync(Buffer.alloc(4097)), 4096));
    expect(error.kind).toBe('too_large');
    expect(error.message).toBe(
      'request body decompressed exceeds the 4096-byte limit (--max-body-bytes); split the batch; nothing was stored',
    );
  });

  it('stops inflating a gzip bomb at the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(32 * 1024);
    expect((await failure(decodeContentEncoding('gzip', bomb, 1024 * 1024))).kind).toBe('too_large');
  });
});
