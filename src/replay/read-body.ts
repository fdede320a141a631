/**
 * @module replay/read-body
 * Reads a request body as text, refusing it (413 too_large) past the bound without
 * holding more than the bound. Under @hono/node-server the body is read from the Node request
 * itself when nothing upstream has touched it (http/node-incoming.ts): asking the lightweight
 * request for its web body builds a whole fetch Request first, which costs more than the rest
 * of a replayed call. Anywhere else (app.request, other runtimes) the web body is read.
 * A body that has not arrived within `timeoutMs` is answered 503 `unavailable` (retryable):
 * the caller reads it holding its replay's turn, which a stalled upload must not keep.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { untouchedIncoming } from '../http/node-incoming.js';
import { ApiError } from '../errors.js';

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('too_large', `the request body is larger than ${maxBytes} bytes`);
}

export async function readBodyText(c: Context, maxBytes: number, timeoutMs?: number): Promise<string> {
  // From the Node request's own headers when there is one: asking Hono's request for a header
  // builds a whole fetch Headers first.
  const incoming = untouchedIncoming(c) as IncomingMessage | null;
  const declared = Number(incoming ? incoming.headers['content-length'] : c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  let timer: NodeJS.Timeout | undefined;
  const timedOut =
    timeoutMs === undefined
      ? null
      : new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new ApiError(
                  'unavailable',
                  `the request body did not arrive within ${timeoutMs} ms (--body-timeout-ms); nothing was served`,
                ),
              ),
            timeoutMs,
          );
        });
  timedOut?.catch(() => {}); // heard through the races below
  const within = <T>(read: Promise<T>): Promise<T> => (timedOut ? Promise.race([read, timedOut]) : read);
  try {
    return await readWithin(c, maxBytes, within);
  } finally {
    clearTimeout(timer);
  }
}

async function readWithin(c: Context, maxBytes: number, within: <T>(read: Promise<T>) => Promise<T>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const take = (chunk: Uint8Array): void => {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  };
  const incoming = untouchedIncoming(c);
  if (incoming) {
    const chunks = incoming[Symbol.asyncIterator]();
    for (;;) {
      const next = chunks.next();
      next.catch(() => {});
      const { done, value } = await within(next);
      if (done) break;
      take(value as Buffer);
    }
  } else if (c.req.raw.bodyUsed) {
    // read upstream already: Hono keeps what it read
    take(Buffer.from(await within(c.req.text()), 'utf8'));
  } else {
    const body = c.req.raw.body;
    if (!body) return '';
    const reader = body.getReader();
    try {
      for (;;) {
        const next = reader.read();
        next.catch(() => {});
        const { done, value } = await within(next);
        if (done) break;
        take(value);
      }
    } catch (error) {
      await reader.cancel().catch(() => {});
      throw error;
    } finally {
      reader.releaseLock();
    }
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
