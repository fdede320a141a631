/**
 * @module ingest/body
 * Reads an OTLP/HTTP request body within the size bound. The bound applies to the bytes
 * received and again to the decompressed size, so a small gzip bomb is refused too.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { IngestError } from '../errors.js';

const gunzipAsync = promisify(gunzip);

export async function readBoundedBody(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes, 'received');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/** Content-Encoding: absent or identity → as is; gzip → inflated within maxBytes; else 415. */
export async function decodeContentEncoding(encoding: string | undefined, body: Buffer, maxBytes: number): Promise<Buffer> {
  const value = (encoding ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return body;
  if (value !== 'gzip' && value !== 'x-gzip') {
    throw new IngestError('unsupported_media_type', `unsupported Content-Encoding ${JSON.stringify(encoding)}: send gzip or no encoding`);
  }
  try {
    return await gunzipAsync(body, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) throw tooLarge(maxBytes, 'decompressed');
    throw new IngestError('bad_input', `Content-Encoding is gzip but the body does not inflate: ${(error as Error).message}; nothing was stored`, { cause: error });
  }
}

function tooLarge(maxBytes: number, what: string): IngestError {
  return new IngestError('too_large', `request body ${what} exceeds the ${maxBytes}-byte limit (--max-body-bytes); split the batch; nothing was stored`);
}
