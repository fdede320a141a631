/**
 * @module http/chunked-body
 * A response body made a chunk at a time: the first chunk at once, each next one after the
 * event loop has turned, so the socket sends what is made while the rest is. A body of one
 * chunk is that chunk, sent with its length. A client that goes away stops the making (the
 * iterator is returned).
 */

export function chunkedBody(chunks: Iterable<Uint8Array>): Uint8Array | ReadableStream<Uint8Array> {
  const it = chunks[Symbol.iterator]();
  const first = it.next();
  if (first.done) return new Uint8Array(0);
  let pending: IteratorResult<Uint8Array> | undefined = it.next();
  if (pending.done) return first.value;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first.value);
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
