/**
 * @module ingest/body
 * Reads an OTLP/HTTP request body within the size bound. The bound applies to the bytes
 * received and again to the decompressed size, so a small gzip bomb is refused too.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { IngestError } from '../errors.js';

const gunzipAsync = promisify(gunzip);

/**
 * The body's bytes, from the web body or the Node request itself (http/node-incoming.ts); on
 * a body past the bound, reading stops (the stream is cancelled or destroyed) and too_large
 * is thrown.
 */
export async function readBoundedBody(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | null,
  maxBytes: number,
  expectedBytes?: number,
): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  // With the length announced (Content-Length), chunks are copied into one buffer as they
  // arrive and dropped, instead of being held until a concat makes a second copy of the body.
  let into = expectedBytes !== undefined && expectedBytes <= maxBytes ? Buffer.allocUnsafe(expectedBytes) : undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  // both iterate; leaving early (too large) cancels the web stream or destroys the Node one
  for await (const value of body as AsyncIterable<Uint8Array>) {
    if (size + value.byteLength > maxBytes) throw tooLarge(maxBytes, 'received');
    if (into && size + value.byteLength <= into.length) {
      into.set(value, size);
    } else {
      // More than announced (or nothing announced): collect, and concat at the end.
      if (into) chunks.push(into.subarray(0, size));
      into = undefined;
      chunks.push(value);
    }
    size += value.byteLength;
  }
  return into ? into.subarray(0, size) : Buffer.concat(chunks, size);
}

/** Content-Encoding: absent or identity → as is; gzip → inflated within maxBytes; else 415. */
export async function decodeContentEncoding(
  encoding: string | undefined,
  body: Buffer,
  maxBytes: number,
): Promise<Buffer> {
  const value = (encoding ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return body;
  if (value !== 'gzip' && value !== 'x-gzip') {
    throw new IngestError(
      'unsupported_media_type',
      `unsupported Content-Encoding ${JSON.stringify(encoding)}: send gzip or no encoding`,
    );
  }
  try {
    return await gunzipAsync(body, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError)
      throw tooLarge(maxBytes, 'decompressed');
    throw new IngestError(
      'bad_input',
      `Content-Encoding is gzip but the body does not inflate: ${(error as Error).message}; nothing was stored`,
      { cause: error },
    );
  }
}

function tooLarge(maxBytes: number, what: string): IngestError {
  return new IngestError(
    'too_large',
    `request body ${what} exceeds the ${maxBytes}-byte limit (--max-body-bytes); split the batch; nothing was stored`,
  );
}
