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
  // The Node request is read through its events, one promise for the whole body: an async
  // iterator and a race with the timer per chunk cost more than the rest of a small call.
  if (incoming) return readIncoming(incoming, maxBytes, timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const timedOut =
    timeoutMs === undefined
      ? null
      : new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(notArrived(timeoutMs)), timeoutMs);
        });
  timedOut?.catch(() => {}); // heard through the races below
  const within = <T>(read: Promise<T>): Promise<T> => (timedOut ? Promise.race([read, timedOut]) : read);
  try {
    return await readWithin(c, maxBytes, within);
  } finally {
    clearTimeout(timer);
  }
}

function notArrived(timeoutMs: number): ApiError {
  return new ApiError(
    'unavailable',
    `the request body did not arrive within ${timeoutMs} ms (--body-timeout-ms); nothing was served`,
  );
}

function readIncoming(incoming: IncomingMessage, maxBytes: number, timeoutMs: number | undefined): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => fail(notArrived(timeoutMs)), timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const fail = (error: unknown): void => {
      done();
      // what is left of the body is not read: the answer is an error, the connection may close
      incoming.pause();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > maxBytes) fail(tooLarge(maxBytes));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (error: Error): void => fail(error);
    // closed before its end: the client went away
    const onClose = (): void => {
      if (!incoming.readableEnded) fail(new Error('the request was closed before its body ended'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

async function readWithin(c: Context, maxBytes: number, within: <T>(read: Promise<T>) => Promise<T>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const take = (chunk: Uint8Array): void => {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  };
  if (c.req.raw.bodyUsed) {
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
