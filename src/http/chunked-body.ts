/**
 * @module http/chunked-body
 * A response body made a chunk at a time: the first two chunks before answering (an error
 * making them is answered as any error is), the rest while the ones before are sent. A body
 * of one chunk is that chunk, sent with its length. A client that goes away stops the making
 * (the iterator is returned).
 *
 * Under @hono/node-server the chunks are written to the Node response itself (c.env.outgoing),
 * each next one made while the socket sends the last, and a chunk whose write has completed
 * is handed back to its maker (recycle), whose buffer is then written again: a long answer
 * reuses a few buffers rather than faulting in fresh pages for every chunk. Anywhere else
 * (app.request, other runtimes) the body is a web stream, and no chunk is handed back.
 */
import { ServerResponse } from 'node:http';
import { X_ALREADY_SENT } from '@hono/node-server/utils/response/constants';
import type { Context } from 'hono';

/** Chunks to send; `recycle`, when given, takes back a chunk nothing reads any more. */
export type ChunkSource = Iterable<Uint8Array> & { recycle?(chunk: Uint8Array): void };

/** The answer (200) whose body is the chunks, with the given headers. */
export function chunkedResponse(c: Context, chunks: ChunkSource, headers: Record<string, string>): Response {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  if (!(outgoing instanceof ServerResponse) || outgoing.headersSent) {
    return new Response(chunkedBody(chunks), { headers });
  }
  const start = firstChunks(chunks);
  // the headers the app has set so far (the request id), then the answer's own
  const head: Record<string, string> = { ...Object.fromEntries(c.res.headers), ...headers };
  if ('only' in start) {
    outgoing.writeHead(200, { ...head, 'content-length': String(start.only.length) });
    outgoing.end(start.only);
  } else {
    outgoing.writeHead(200, head);
    writeChunks(outgoing, start.it, start.first, start.second, chunks.recycle);
  }
  // the node adapter leaves an answer so marked alone
  return new Response(null, { headers: { [X_ALREADY_SENT]: 'true' } });
}

/** The first two chunks, made before answering; a body of at most one chunk is that chunk. */
function firstChunks(
  chunks: Iterable<Uint8Array>,
): { only: Uint8Array } | { it: Iterator<Uint8Array>; first: Uint8Array; second: Uint8Array } {
  const it = chunks[Symbol.iterator]();
  const first = it.next();
  if (first.done) return { only: new Uint8Array(0) };
  const second = it.next();
  if (second.done) return { only: first.value };
  return { it, first: first.value, second: second.value };
}

/**
 * Writes `first`, then each next chunk, one made ahead while the last is sent and the rest
 * as the socket drains; a chunk goes back to `recycle` once its write has completed.
 */
function writeChunks(
  out: ServerResponse,
  it: Iterator<Uint8Array>,
  first: Uint8Array,
  second: Uint8Array,
  recycle: ((chunk: Uint8Array) => void) | undefined,
): void {
  const write = (chunk: Uint8Array): boolean => out.write(chunk, recycle && ((error) => error || recycle(chunk)));
  out.once('close', () => {
    if (!out.writableFinished) it.return?.();
  });
  let next: Uint8Array | undefined = second;
  const pump = (): void => {
    try {
      while (next !== undefined && !out.destroyed) {
        const ready = write(next);
        const made = it.next();
        next = made.done ? undefined : made.value;
        if (!ready && next !== undefined) {
          out.once('drain', pump);
          return;
        }
      }
      if (!out.destroyed) out.end();
    } catch (error) {
      out.destroy(error as Error);
    }
  };
  write(first);
  pump();
}

export function chunkedBody(chunks: Iterable<Uint8Array>): Uint8Array | ReadableStream<Uint8Array> {
  const start = firstChunks(chunks);
  if ('only' in start) return start.only;
  const { it, first } = start;
  let pending: IteratorResult<Uint8Array> | undefined = { done: false, value: start.second };
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first);
      const next = (): void => {
        if (cancelled) return;
        try {
          const chunk = pending ?? it.next();
          pending = undefined;
          if (chunk.done) {
            controller.close();
            return;
          }
          controller.enqueue(chunk.value);
        } catch (error) {
          controller.error(error);
          return;
        }
        setImmediate(next);
      };
      setImmediate(next);
    },
    cancel() {
      cancelled = true;
      it.return?.();
    },
  });
}
