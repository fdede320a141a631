/**
 * Reading an OTLP/HTTP body within its bounds (src/ingest/body.ts, content-decoder.ts): the
 * bound holds for the bytes received and again for the decoded bytes, counted as they are
 * decompressed, so a small gzip, deflate or zstd body stops expanding at the bound; a body
 * that does not arrive within its deadline is refused as retryable; codings other than gzip,
 * deflate, zstd and identity are refused as unsupported. The zstd frames are real ones made
 * by the zstd tool (test/fixtures/zstd/README.md).
 */
import { readFileSync } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../../src/errors.js';
import { readRequestBody } from '../../../src/ingest/body.js';
import { type ContentCoding, contentCodingOf } from '../../../src/ingest/content-decoder.js';

const zstdFixture = (name: string) => readFileSync(new URL(`../../fixtures/zstd/${name}`, import.meta.url));

function streamOf(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

/** The bytes in chunks of `size`, as a socket would deliver them. */
function chunked(bytes: Uint8Array, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(Buffer.from(bytes.subarray(at, at + size)));
  return Readable.from(chunks);
}

const read = (
  body: ReadableStream<Uint8Array> | Readable | null,
  coding: ContentCoding,
  maxBytes: number,
  timeoutMs = 10_000,
) => readRequestBody(body, coding, { maxBytes, timeoutMs });

async function failure(promise: Promise<unknown>): Promise<IngestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IngestError);
  return error as IngestError;
}

describe('readRequestBody', () => {
  it('reads a body sent in several chunks', async () => {
    const body = await read(streamOf(Buffer.from('ab'), Buffer.from('cd'), Buffer.from('e')), 'identity', 10);
    expect(body.toString()).toBe('abcde');
  });

  it('reads no body as an empty one', async () => {
    expect(await read(null, 'identity', 10)).toEqual(Buffer.alloc(0));
  });

  it('accepts a body of exactly the limit and refuses one byte more as too large', async () => {
    expect((await read(streamOf(Buffer.alloc(6), Buffer.alloc(4)), 'identity', 10)).length).toBe(10);
    const error = await failure(read(streamOf(Buffer.alloc(6), Buffer.alloc(5)), 'identity', 10));
    expect(error.kind).toBe('too_large');
    expect(error.message).toBe(
      'request body received exceeds the 10-byte limit (--max-body-bytes); split the batch; nothing was stored',
    );
  });

  it('reads the Node request itself, and at the limit stops reading it without destroying it', async () => {
    expect((await read(Readable.from([Buffer.from('ab'), Buffer.from('cde')]), 'identity', 10)).toString()).toBe(
      'abcde',
    );
    const incoming = Readable.from([Buffer.alloc(6), Buffer.alloc(5), Buffer.alloc(1)]);
    const error = await failure(read(incoming, 'identity', 10));
    expect(error.kind).toBe('too_large');
    // the HTTP server sends the answer, then drains or closes the connection itself
    expect(incoming.destroyed).toBe(false);
    expect(incoming.isPaused()).toBe(true);
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
    expect((await failure(read(body, 'identity', 10))).kind).toBe('too_large');
    expect(cancelled).toBe(true);
  });

  it('refuses a body that has not arrived within the deadline as retryable, and stops reading it', async () => {
    const incoming = new PassThrough();
    incoming.write(Buffer.from('part of a body'));
    const error = await failure(read(incoming, 'identity', 1024, 50));
    expect(error.kind).toBe('unavailable');
    expect(error.retryAfterSeconds).toBe(1);
    expect(error.message).toBe(
      'request body did not arrive within 50 ms (--body-timeout-ms); nothing was stored; retry',
    );
    expect(incoming.listenerCount('data')).toBe(0);
  });

  it('refuses a body whose connection closed before its end', async () => {
    const incoming = new PassThrough();
    incoming.write(Buffer.from('part'));
    setTimeout(() => incoming.destroy(), 10);
    const error = await failure(read(incoming, 'identity', 1024));
    expect(error.kind).toBe('bad_input');
    expect(error.message).toMatch(/^the request body was cut off before its end/);
  });

  describe('with an announced length', () => {
    const parts = () => [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fghij')];
    const readAnnounced = (maxBytes: number, expectedBytes: number) =>
      readRequestBody(streamOf(...parts()), 'identity', { maxBytes, timeoutMs: 10_000, expectedBytes });

    it('reads a body of the announced length, or longer, or shorter', async () => {
      for (const announced of [10, 4, 50]) expect((await readAnnounced(100, announced)).toString()).toBe('abcdefghij');
    });

    it('refuses a body over the bound whatever was announced', async () => {
      await expect(readAnnounced(9, 10)).rejects.toMatchObject({ kind: 'too_large' });
      await expect(readAnnounced(9, 5)).rejects.toMatchObject({ kind: 'too_large' });
    });
  });
});

describe('Content-Encoding', () => {
  const plain = Buffer.from('{"resourceSpans":[]}');
  const json = zstdFixture('traces.json');

  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    [' Identity ', 'identity'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['deflate', 'deflate'],
    ['zstd', 'zstd'],
  ] as const)('%j is %s', (header, coding) => {
    expect(contentCodingOf(header)).toBe(coding);
  });

  it.each(['br', 'compress', 'gzip, br', 'zstd, gzip'])(
    'refuses %j as unsupported, naming what is accepted',
    (header) => {
      let error: unknown;
      try {
        contentCodingOf(header);
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({
        kind: 'unsupported_media_type',
        message: `unsupported Content-Encoding ${JSON.stringify(header)}: send gzip, deflate, zstd or no encoding`,
      });
    },
  );

  it.each([
    ['gzip', gzipSync(json)],
    ['deflate', deflateSync(json)],
    ['deflate', deflateRawSync(json)], // raw deflate, as some senders send it
    ['zstd', zstdFixture('traces.json.zst')],
    ['zstd', zstdFixture('traces-two-frames.json.zst')],
  ] as const)('decodes a %s body, however it is cut into chunks', async (coding, encoded) => {
    for (const size of [1, 7, 64, encoded.length]) {
      expect(await read(chunked(encoded, size), coding, 4096)).toEqual(json);
    }
  });

  it.each([
    ['gzip', plain, /^Content-Encoding is gzip but the body does not inflate: .*; nothing was stored$/],
    [
      'deflate',
      Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff]),
      /^Content-Encoding is deflate but the body does not inflate/,
    ],
    ['zstd', plain, /^Content-Encoding is zstd but the body does not decompress: .*; nothing was stored$/],
  ] as const)('refuses a %s-labelled body that does not decode as bad input', async (coding, body, message) => {
    const error = await failure(read(streamOf(body), coding, 1024));
    expect(error.kind).toBe('bad_input');
    expect(error.message).toMatch(message);
  });

  it.each([
    ['gzip', gzipSync(Buffer.alloc(2000, 'x'))],
    ['deflate', deflateSync(Buffer.alloc(2000, 'x'))],
    ['zstd', zstdFixture('traces.json.zst')],
  ] as const)('refuses a truncated %s body as bad input', async (coding, whole) => {
    const error = await failure(read(streamOf(whole.subarray(0, whole.length - 8)), coding, 4096));
    expect(error.kind).toBe('bad_input');
  });

  it.each(['gzip', 'deflate'] as const)(
    'accepts a %s body decoding to exactly the limit and refuses one decoding a byte past it',
    async (coding) => {
      const encode = coding === 'gzip' ? gzipSync : deflateSync;
      expect((await read(streamOf(encode(Buffer.alloc(4096))), coding, 4096)).length).toBe(4096);
      const error = await failure(read(streamOf(encode(Buffer.alloc(4097))), coding, 4096));
      expect(error.kind).toBe('too_large');
      expect(error.message).toBe(
        'request body decompressed exceeds the 4096-byte limit (--max-body-bytes); split the batch; nothing was stored',
      );
    },
  );

  it.each([
    ['gzip', gzipSync(Buffer.alloc(16 * 1024 * 1024))],
    ['deflate', deflateSync(Buffer.alloc(16 * 1024 * 1024))],
    ['zstd', zstdFixture('zeros-16MiB.zst')],
  ] as const)('stops decoding a %s bomb at the limit', async (coding, bomb) => {
    expect(bomb.length).toBeLessThan(32 * 1024);
    const error = await failure(read(streamOf(bomb), coding, 1024 * 1024));
    expect(error.kind).toBe('too_large');
    expect(error.message).toMatch(/^request body decompressed exceeds the 1048576-byte limit/);
  });

  it('refuses a zstd frame declaring a window over the limit before allocating it', async () => {
    // magic, no content size, window descriptor 0xa0: a 1 GiB window; then a raw block of 1 byte
    const frame = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa0, 0x09, 0x00, 0x00, 0x41]);
    const error = await failure(read(streamOf(frame), 'zstd', 1024 * 1024));
    expect(error.kind).toBe('too_large');
    expect(error.message).toBe(
      'request body decompressed exceeds the 1048576-byte limit (--max-body-bytes): a zstd frame declares a 1073741824-byte window; split the batch; nothing was stored',
    );
  });

  it('refuses a zstd frame declaring more content than the limit, in its second frame too', async () => {
    const whole = zstdFixture('traces.json.zst');
    const error = await failure(read(streamOf(whole, whole), 'zstd', 3000));
    expect(error.kind).toBe('too_large');
    const big = Buffer.concat([whole, whole]);
    expect((await failure(read(chunked(big, 5), 'zstd', 2244 + 100))).message).toMatch(
      /^request body decompressed exceeds the 2344-byte limit/,
    );
    expect((await failure(read(streamOf(whole), 'zstd', 2000))).message).toBe(
      'request body decompressed exceeds the 2000-byte limit (--max-body-bytes): a zstd frame declares 2244 bytes of content; split the batch; nothing was stored',
    );
  });
});
