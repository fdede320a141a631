/**
 * @module replay/forward
 * A call for a replay another replica holds, passed on to that replica as it came: method,
 * path, headers (Host and the credential included, so the owner checks them as its own) and
 * body streamed both ways, so a paced stream reaches the agent as the owner paces it. The
 * owner does not forward again a request marked as forwarded.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { ApiError } from '../errors.js';

/** Marks a forwarded request with the replica that forwarded it. */
export const FORWARDED_BY = 'x-tapedeck-forwarded-by';

// Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection, not to the request.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

export function forwardToOwner(req: Request, ownerUrl: string, selfUrl: string, replayId: string): Promise<Response> {
  const incoming = new URL(req.url);
  const target = new URL(`${ownerUrl}${incoming.pathname}${incoming.search}`);
  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) headers[name] = value;
  });
  headers[FORWARDED_BY] = selfUrl;
  return new Promise((resolve, reject) => {
    const send = target.protocol === 'https:' ? https.request : http.request;
    const outgoing = send(target, { method: req.method, headers, signal: req.signal }, (answer) => {
      const out = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value === undefined || HOP_BY_HOP.has(name)) continue;
        for (const one of Array.isArray(value) ? value : [value]) out.append(name, one);
      }
      const empty = req.method === 'HEAD' || answer.statusCode === 204 || answer.statusCode === 304;
      resolve(
        new Response(empty ? null : (Readable.toWeb(answer) as ReadableStream<Uint8Array>), {
          status: answer.statusCode ?? 502,
          headers: out,
        }),
      );
    });
    outgoing.once('error', (error) =>
      reject(
        new ApiError(
          'unavailable',
          `replay ${replayId} is held by the replica at ${ownerUrl}, which could not be reached (${error.message})`,
          { cause: error },
        ),
      ),
    );
    if (req.body) Readable.fromWeb(req.body as import('node:stream/web').ReadableStream).pipe(outgoing);
    else outgoing.end();
  });
}
