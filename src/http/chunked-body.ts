/**
 * @module http/chunked-body
 * A response body made a chunk at a time: the first chunk at once, each next one after the
 * event loop has turned, so the socket sends what is made while the rest is. A client that
 * goes away stops the making (the iterator is returned).
 */

export function chunkedBody(chunks: Iterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = chunks[Symbol.iterator]();
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const next = (): void => {
        if (cancelled) return;
        try {
          const chunk = it.next();
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
      next();
    },
    cancel() {
      cancelled = true;
      it.return?.();
    },
  });
}
