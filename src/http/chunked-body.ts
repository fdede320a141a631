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

/**
 * Told of an error making a chunk after the answer has started, when all the server can do
 * is cut the connection (the client sees a body cut short).
 */
export type CutShort = (error: unknown) => void;

/**
 * The answer (200) whose body is the chunks, with the given headers. A HEAD request gets the
 * headers a GET would, and no more chunks are made than those needed to choose them.
 */
export function chunkedResponse(
  c: Context,
  chunks: ChunkSource,
  headers: Record<string, string>,
  cutShort: CutShort = () => {},
): Response {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  if (!(outgoing instanceof ServerResponse) || outgoing.headersSent) {
    return new Response(chunkedBody(chunks, cutShort), { headers });
  }
  const start = firstChunks(chunks);
  // the headers the app has set so far (the request id), then the answer's own
  const head: Record<string, string> = { ...Object.fromEntries(c.res.headers), ...headers };
  if ('only' in start) {
    outgoing.writeHead(200, { ...head, 'content-length': String(start.only.length) });
    outgoing.end(start.only);
  } else {
    outgoing.writeHead(200, head);
    if (c.req.method !== 'HEAD') writeChunks(outgoing, start, chunks.recycle, cutShort);
    else {
      // no framing header: its value is settled only by sending the body (RFC 9110, 9.3.2)
      outgoing.end();
      start.it.return?.();
    }
  }
  // the node adapter leaves an answer so marked alone
  return new Response(null, { headers: { [X_ALREADY_SENT]: 'true' } });
}

interface Started {
  it: Iterator<Uint8Array>;
  first: Uint8Array;
  second: Uint8Array;
}

/** The first two chunks, made before answering; a body of at most one chunk is that chunk. */
function firstChunks(chunks: Iterable<Uint8Array>): { only: Uint8Array } | Started {
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
  { it, first, second }: Started,
  recycle: ((chunk: Uint8Array) => void) | undefined,
  cutShort: CutShort,
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
      cutShort(error);
      out.destroy(error as Error);
    }
  };
  write(first);
  pump();
}

/**
 * The chunks as a web stream (or the one chunk), each next one made when the reader wants
 * it; one the reader never asks for (a HEAD answer's) is never made.
 */
export function chunkedBody(
  chunks: Iterable<Uint8Array>,
  cutShort: CutShort = () => {},
): Uint8Array | ReadableStream<Uint8Array> {
  const start = firstChunks(chunks);
  if ('only' in start) return start.only;
  const { it, first } = start;
  let pending: IteratorResult<Uint8Array> | undefined = { done: false, value: start.second };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first);
    },
    pull(controller) {
      try {
        const chunk = pending ?? it.next();
        pending = undefined;
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      } catch (error) {
        cutShort(error);
        controller.error(error);
      }
    },
    cancel() {
      it.return?.();
    },
  });
}
