import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ChunkSource, chunkedBody, chunkedResponse } from '../../../src/http/chunked-body.js';
import { requestIds } from '../../../src/http/request-id.js';

const streamOf = (body: Uint8Array | ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
  if (!(body instanceof ReadableStream)) throw new Error('expected a stream');
  return body;
};

describe('chunkedBody', () => {
  it('sends every chunk in order, the first two made before the event loop turns', async () => {
    const made: number[] = [];
    function* chunks() {
      for (let i = 0; i < 4; i++) {
        made.push(i);
        yield Buffer.from(`${i};`);
      }
    }
    const body = chunkedBody(chunks());
    expect(made).toEqual([0, 1]);
    expect(Buffer.from(await new Response(body).arrayBuffer()).toString()).toBe('0;1;2;3;');
  });

  it('is the one chunk itself when there is one, so that it goes with its length', () => {
    const only = Buffer.from('{"run":"r"}');
    expect(chunkedBody([only])).toBe(only);
    expect(chunkedBody([])).toHaveLength(0);
  });

  it('stops making chunks once the reader cancels', async () => {
    let made = 0;
    let returned = false;
    function* chunks() {
      try {
        for (;;) {
          made++;
          yield Buffer.from('x');
        }
      } finally {
        returned = true;
      }
    }
    const reader = streamOf(chunkedBody(chunks())).getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    const afterCancel = made;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(returned).toBe(true);
    expect(made).toBe(afterCancel);
  });

  it('throws before answering when the first chunks cannot be made, errors the stream after', async () => {
    function* failsAt(n: number) {
      for (let i = 0; i < n; i++) yield Buffer.from(`${i}`);
      throw new Error('cannot render');
    }
    const cut: unknown[] = [];
    expect(() => chunkedBody(failsAt(1), (e) => cut.push(e))).toThrow('cannot render');
    expect(cut).toEqual([]);
    const reader = streamOf(chunkedBody(failsAt(2), (e) => cut.push(e))).getReader();
    expect((await reader.read()).value?.toString()).toBe('0');
    expect((await reader.read()).value?.toString()).toBe('1');
    await expect(reader.read()).rejects.toThrow('cannot render');
    expect(cut.map((e) => (e as Error).message)).toEqual(['cannot render']);
  });

  it('makes a chunk only when the reader wants one', async () => {
    let made = 0;
    function* chunks() {
      for (let i = 0; i < 1_000; i++) {
        made++;
        yield Buffer.from(`${i};`);
      }
    }
    const reader = streamOf(chunkedBody(chunks())).getReader();
    expect((await reader.read()).value?.toString()).toBe('0;');
    await new Promise((resolve) => setTimeout(resolve, 20));
    // the two made before answering, and at most one queued ahead of the reader
    expect(made).toBeLessThanOrEqual(3);
    await reader.cancel();
  });
});

describe('chunkedResponse under a Node server', () => {
  const CHUNK = 256 * 1024;
  let server: ServerType;
  let base: string;
  let source: () => ChunkSource;
  const cut: unknown[] = [];

  beforeAll(async () => {
    const app = new Hono();
    app.use(requestIds());
    app.get('/chunks', (c) =>
      chunkedResponse(c, source(), { 'content-type': 'application/json' }, (error) => cut.push(error)),
    );
    app.onError((error) => new Response(error.message, { status: 500 }));
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** `count` chunks, chunk i all bytes i, each written into a buffer handed back when there is one. */
  function recycling(count: number) {
    const spare: Uint8Array[] = [];
    const stats = { made: 0, fresh: 0, recycled: 0, returned: false };
    const src: ChunkSource = {
      *[Symbol.iterator]() {
        try {
          for (let i = 0; i < count; i++) {
            const buf = spare.pop() ?? (stats.fresh++, new Uint8Array(CHUNK));
            buf.fill(i % 256);
            stats.made++;
            yield buf;
          }
        } finally {
          stats.returned = true;
        }
      },
      recycle(chunk) {
        stats.recycled++;
        spare.push(chunk);
      },
    };
    return { src, stats };
  }

  /** GET, read slowly (paused a while after each of the first chunks), the whole body and headers. */
  function slowGet(path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      http
        .get(`${base}${path}`, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => {
            parts.push(part);
            if (parts.length < 20) {
              res.pause();
              setTimeout(() => res.resume(), 5);
            }
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }),
          );
          res.on('error', reject);
        })
        .on('error', reject);
    });
  }

  it('sends every chunk in order with the app headers, reusing a chunk only once it has been sent', async () => {
    const count = 40;
    const { src, stats } = recycling(count);
    source = () => src;
    const { status, headers, body } = await slowGet('/chunks');
    expect(status).toBe(200);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-request-id']).toMatch(/^[\w-]+$/);
    expect(headers['transfer-encoding']).toBe('chunked');
    expect(body.length).toBe(count * CHUNK);
    // a chunk written again before its bytes had gone would show another chunk's byte
    for (let i = 0; i < count; i++) {
      const part = body.subarray(i * CHUNK, (i + 1) * CHUNK);
      expect([i, part[0], part.every((b) => b === part[0])]).toEqual([i, i % 256, true]);
    }
    expect(stats.made).toBe(count);
    expect(stats.fresh).toBeLessThan(count / 2);
    expect(stats.recycled).toBeGreaterThan(count / 2);
  });

  it('sends one chunk with its length', async () => {
    const { src } = recycling(1);
    source = () => src;
    const res = await fetch(`${base}/chunks`);
    expect(res.headers.get('content-length')).toBe(String(CHUNK));
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect((await res.arrayBuffer()).byteLength).toBe(CHUNK);
  });

  it('answers an error making the first chunks as any error, and ends the connection on a later one', async () => {
    function* failsAt(n: number) {
      for (let i = 0; i < n; i++) yield Buffer.alloc(CHUNK, i);
      throw new Error('cannot render');
    }
    source = () => failsAt(1);
    const refused = await fetch(`${base}/chunks`);
    expect([refused.status, await refused.text()]).toEqual([500, 'cannot render']);
    expect(cut).toEqual([]);
    source = () => failsAt(4);
    const cutShort = await fetch(`${base}/chunks`);
    expect(cutShort.status).toBe(200);
    await expect(cutShort.arrayBuffer()).rejects.toThrow();
    // the only word of it the server can give
    expect(cut.map((e) => (e as Error).message)).toEqual(['cannot render']);
  });

  it('answers HEAD with the headers a GET gets, making no chunk past the two that choose them', async () => {
    const { src, stats } = recycling(1_000);
    source = () => src;
    const head = await fetch(`${base}/chunks`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(head.headers.get('x-request-id')).toBeTruthy();
    // no framing header: neither a length nor chunked framing, which only sending the body settles
    expect([head.headers.get('content-length'), head.headers.get('transfer-encoding')]).toEqual([null, null]);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    expect([stats.made, stats.returned]).toEqual([2, true]);
    // a body of one chunk: its length, as a GET has it
    source = () => recycling(1).src;
    const one = await fetch(`${base}/chunks`, { method: 'HEAD' });
    expect(one.headers.get('content-length')).toBe(String(CHUNK));
    // the connection serves the next request
    source = () => recycling(3).src;
    expect((await (await fetch(`${base}/chunks`)).arrayBuffer()).byteLength).toBe(3 * CHUNK);
  });

  it('stops making chunks once the client goes away', async () => {
    const { src, stats } = recycling(1_000_000);
    source = () => src;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${base}/chunks`, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    });
    await vi.waitFor(() => expect(stats.returned).toBe(true));
    const made = stats.made;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stats.made).toBe(made);
    expect(made).toBeLessThan(1000);
  });
});
