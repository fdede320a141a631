/**
 * @module http/node-incoming
 * Under @hono/node-server a handler can read a request's body from the Node request itself
 * (c.env.incoming) rather than through the fetch Request the adapter builds on demand: that
 * Request, and the web stream over the Node one, cost more than the rest of a small replayed
 * call, and with large OTLP exports a promise and a queue hop per 64 KiB chunk. Only a
 * request that nothing upstream has started reading, and whose web body was never asked
 * for, is read this way; anywhere else (app.request, other runtimes) the web body is.
 */
import { Readable } from 'node:stream';
import type { Context } from 'hono';

/** The Node request, when nobody has started reading it and its web body was never asked for. */
export function untouchedIncoming(c: Context): Readable | null {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof Readable) || incoming.readableDidRead || incoming.readableEnded) return null;
  const materialized = Object.getOwnPropertySymbols(c.req.raw).some((s) => s.description === 'requestCache');
  return materialized ? null : incoming;
}
