/**
 * @module http/request-id
 * Every request gets an id: the sender's X-Request-Id when it sends a usable one (word
 * characters, `-` and `=`, at most 128), else a new UUID. It is answered in X-Request-Id on
 * every response, errors included, and the log lines about the request carry it as
 * `requestId`, so a client's failure can be matched to the server's account of it.
 */
import type { MiddlewareHandler } from 'hono';
import { requestId } from 'hono/request-id';

const HEADER = 'X-Request-Id';

export function requestIds(): MiddlewareHandler {
  const assign = requestId({ limitLength: 128, headerName: HEADER });
  return (c, next) =>
    assign(c, async () => {
      await next();
      // An error's response is built by onError after the header was prepared: set it again.
      if (!c.res.headers.has(HEADER)) c.res.headers.set(HEADER, c.get('requestId'));
    });
}
