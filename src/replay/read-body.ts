/**
 * @module replay/read-body
 * Reads a request body as text, refusing it (413 too_large) past the bound without
 * holding more than the bound. Under @hono/node-server the body is read from the Node request
 * itself when nothing upstream has touched it (http/node-incoming.ts): asking the lightweight
 * request for its web body builds a whole fetch Request first, which costs more than the rest
 * of a replayed call. Anywhere else (app.request, other runtimes) the web body is read.
 */
import type { Context } from 'hono';
import { untouchedIncoming } from '../http/node-incoming.js';
import { ApiError } from '../errors.js';

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('too_large', `the request body is larger than ${maxBytes} bytes`);
}

export async function readBodyText(c: Context, maxBytes: number): Promise<string> {
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const take = (chunk: Uint8Array): void => {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  };
  const incoming = untouchedIncoming(c);
  if (incoming) {
    for await (const chunk of incoming) take(chunk as Buffer);
  } else if (c.req.raw.bodyUsed) {
    // read upstream already: Hono keeps what it read
    take(Buffer.from(await c.req.text(), 'utf8'));
  } else {
    const body = c.req.raw.body;
    if (!body) return '';
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        take(value);
      }
    } finally {
      reader.releaseLock();
    }
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
