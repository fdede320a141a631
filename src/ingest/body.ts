/**
 * @module ingest/body
 * Reads an OTLP/HTTP request body within its bounds: the bytes received, the bytes they
 * decode to (decompressed as they arrive, so a small gzip or zstd bomb stops at the bound
 * instead of inflating whole), and the time the body takes to arrive.
 */
import type { Readable } from 'node:stream';
import { IngestError } from '../errors.js';
import { contentDecoder, type ContentCoding } from './content-decoder.js';

export interface BodyBounds {
  /** bytes received, and again bytes decoded (--max-body-bytes) */
  maxBytes: number;
  /** the whole body must have arrived within this many milliseconds of the first read */
  timeoutMs: number;
  /** Content-Length, when announced: an identity body is read straight into one buffer */
  expectedBytes?: number;
}

/**
 * The body's decoded bytes, from the web body or the Node request itself (http/node-incoming.ts).
 * On a bound passed, reading stops and too_large is thrown; on the deadline, `unavailable`
 * (the sender retries). A Node request is left unread rather than destroyed, so the answer
 * still reaches the sender (the HTTP server drains or closes the connection after it).
 */
export async function readRequestBody(
  body: ReadableStream<Uint8Array> | Readable | null,
  coding: ContentCoding,
  bounds: BodyBounds,
): Promise<Buffer> {
  const decoded = new BoundedBytes(
    bounds.maxBytes,
    coding === 'identity' ? 'received' : 'decompressed',
    coding === 'identity' ? bounds.expectedBytes : undefined,
  );
  const decoder = contentDecoder(coding, (chunk) => decoded.add(chunk), bounds.maxBytes);
  if (!body) {
    await decoder.end();
    return decoded.bytes();
  }
  const source = 'getReader' in body ? webChunks(body) : nodeChunks(body);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTimedOut(bounds.timeoutMs)), bounds.timeoutMs);
  });
  deadline.catch(() => {}); // raced below; unobserved once the body is complete
  let received = 0;
  try {
    for (;;) {
      const chunk = await Promise.race([source.next(), deadline]);
      if (chunk === null) break;
      received += chunk.byteLength;
      if (received > bounds.maxBytes) throw tooLarge(bounds.maxBytes, 'received');
      await Promise.race([decoder.write(chunk), deadline]);
    }
    await Promise.race([decoder.end(), deadline]);
    return decoded.bytes();
  } finally {
    clearTimeout(timer);
    source.stop();
    decoder.destroy();
  }
}

/** The decoded bytes, refused past the bound. */
class BoundedBytes {
  private chunks: Uint8Array[] = [];
  private size = 0;
  // With the length announced, chunks are copied into one buffer as they arrive and dropped,
  // instead of being held until a concat makes a second copy of the body.
  private into: Buffer | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly what: string,
    expectedBytes: number | undefined,
  ) {
    if (expectedBytes !== undefined && expectedBytes <= maxBytes) this.into = Buffer.allocUnsafe(expectedBytes);
  }

  add(chunk: Uint8Array): void {
    if (this.size + chunk.byteLength > this.maxBytes) throw tooLarge(this.maxBytes, this.what);
    if (this.into && this.size + chunk.byteLength <= this.into.length) {
      this.into.set(chunk, this.size);
    } else {
      // More than announced (or nothing announced): collect, and concat at the end.
      if (this.into) this.chunks.push(this.into.subarray(0, this.size));
      this.into = undefined;
      this.chunks.push(chunk);
    }
    this.size += chunk.byteLength;
  }

  bytes(): Buffer {
    return this.into ? this.into.subarray(0, this.size) : Buffer.concat(this.chunks, this.size);
  }
}

interface BodyChunks {
  /** the next chunk, or null at the end of the body */
  next(): Promise<Uint8Array | null>;
  /** stops reading (the rest of the body is left to the HTTP server) */
  stop(): void;
}

/** Chunks of the Node request, one at a time (paused in between), without destroying it. */
function nodeChunks(stream: Readable): BodyChunks {
  const queue: Uint8Array[] = [];
  let ended = stream.readableEnded;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const onData = (chunk: Uint8Array) => {
    queue.push(chunk);
    stream.pause();
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const onError = (error: Error) => {
    failure ??= error;
    wake?.();
  };
  const onClose = () => {
    if (!ended) failure ??= new Error('the connection closed');
    wake?.();
  };
  stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  stream.pause();
  return {
    async next() {
      for (;;) {
        const chunk = queue.shift();
        if (chunk) return chunk;
        if (failure) throw bodyCutOff(failure);
        if (ended) return null;
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
        });
        stream.resume();
        await woken;
        wake = undefined;
      }
    },
    stop() {
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      stream.pause();
    },
  };
}

function webChunks(body: ReadableStream<Uint8Array>): BodyChunks {
  const reader = body.getReader();
  let done = false;
  return {
    async next() {
      const result = await reader.read().catch((error: unknown) => {
        throw bodyCutOff(error as Error);
      });
      done = result.done;
      return result.done ? null : result.value;
    },
    stop() {
      if (!done) reader.cancel().catch(() => {});
      reader.releaseLock();
    },
  };
}

function tooLarge(maxBytes: number, what: string): IngestError {
  return new IngestError(
    'too_large',
    `request body ${what} exceeds the ${maxBytes}-byte limit (--max-body-bytes); split the batch; nothing was stored`,
  );
}

function bodyTimedOut(timeoutMs: number): IngestError {
  return new IngestError(
    'unavailable',
    `request body did not arrive within ${timeoutMs} ms (--body-timeout-ms); nothing was stored; retry`,
    { retryAfterSeconds: 1 },
  );
}

function bodyCutOff(cause: Error): IngestError {
  return new IngestError(
    'bad_input',
    `the request body was cut off before its end (${cause.message}); nothing was stored`,
    { cause },
  );
}
