import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describe, expect, it } from 'vitest';
import type { Tape } from '../../../src/normalize/step.js';
import { cloneTape } from '../../fixtures/replay/harness.js';
import { errorOf, testApp, weather } from './routes-helpers.js';

/**
 * The divergence explainer re-reads the recording; holding that read holds the diverging
 * call's turn, which is how these tests pin what waits for what.
 */
function heldRereads() {
  let loadsOfA = 0;
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let started!: () => void;
  const rereading = new Promise<void>((r) => {
    started = r;
  });
  const tapes = new Map<string, Tape>([
    ['a', { ...cloneTape(weather.tape), run: 'a' }],
    ['b', { ...cloneTape(weather.tape), run: 'b' }],
  ]);
  const loadTape = async (run: string) => {
    if (run === 'a' && ++loadsOfA > 1) {
      started();
      await held;
    } // the first load is the creation
    return tapes.get(run);
  };
  return { loadTape, release, rereading };
}

const diverging = { messages: [{ role: 'user', content: 'something else' }] };

describe('calls to replays take turns', () => {
  it("lets calls to other replays proceed while one replay's call holds its turn", async () => {
    const gate = heldRereads();
    const t = testApp({ deps: { loadTape: gate.loadTape } });
    const a = (await t.create('a')).body.id;
    const b = (await t.create('b')).body.id;
    const slow = t.ask(a, 0, diverging);
    await gate.rereading;
    const other = await t.ask(b, 0); // does not wait for replay a
    expect(other.status).toBe(200);
    let waitedDone = false;
    const waiting = t.ask(a, 0).then((r) => {
      waitedDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(waitedDone).toBe(false); // the second call to a waits for the first
    gate.release();
    expect((await slow).status).toBe(409);
    expect((await waiting).status).toBe(200);
  });

  it("reads a call's body only in its turn: a waiting call has not read or judged it", async () => {
    const gate = heldRereads();
    const t = testApp({ deps: { loadTape: gate.loadTape } });
    const a = (await t.create('a')).body.id;
    const slow = t.ask(a, 0, diverging);
    await gate.rereading;
    let answered = false;
    const path = `/v1/replays/${a}/openai/v1/chat/completions`;
    const malformed = t.call('POST', path, '{"messages": [').then((r) => {
      answered = true;
      return r;
    });
    const tool = t.call('POST', `/v1/replays/${a}/tools/next`, '{"tool": 7}').then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toBe(false); // the bodies wait unread behind the call holding the turn
    gate.release();
    expect((await slow).status).toBe(409);
    expect(errorOf(await malformed)).toMatchObject({
      type: 'bad_input',
      message: 'malformed JSON in the request body',
    });
    expect(errorOf(await tool)).toMatchObject({ type: 'bad_input' });
  });

  it('answers 503 a call whose body stalls in its turn, and lets the next call have the turn', async () => {
    const t = testApp({ settings: { bodyTimeoutMs: 100 } });
    const id = (await t.create(weather.tape.run)).body.id;
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"messages": ['));
      },
    });
    const res = await t.app.request(`/v1/replays/${id}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stalled,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { error: { type: string; message: string } }).error).toMatchObject({
      type: 'unavailable',
      message: expect.stringMatching(/did not arrive within 100 ms/),
    });
    expect((await t.ask(id, 0)).status).toBe(200); // nothing was consumed
  });

  it('reads the body from the Node request under @hono/node-server: whole, past its bound, and stalled', async () => {
    const t = testApp({ settings: { bodyTimeoutMs: 150, maxRequestBytes: 64 * 1024 } });
    const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }) as http.Server;
    await new Promise<void>((r) => server.once('listening', () => r()));
    const port = (server.address() as AddressInfo).port;
    /** A chunked POST (no content-length): its chunks, then the end unless `end` is false. */
    const post = (id: string, chunks: string[], end = true) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: `/v1/replays/${id}/openai/v1/chat/completions`,
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            let body = '';
            res.on('data', (c) => {
              body += c;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        for (const c of chunks) req.write(c);
        if (end) req.end();
      });
    try {
      const id = (await t.create(weather.tape.run)).body.id;
      const request = JSON.stringify(weather.calls[0].request);
      const half = Math.floor(request.length / 2);
      expect((await post(id, [request.slice(0, half), request.slice(half)])).status).toBe(200);
      const tooLarge = await post(id, ['{"messages": "', 'x'.repeat(70 * 1024), '"}']);
      expect(tooLarge.status).toBe(413);
      const stalled = await post(id, ['{"messages": ['], false);
      expect(stalled.status).toBe(503);
      expect(stalled.body).toMatch(/did not arrive within 150 ms/);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('refuses 404 a call whose turn comes after the replay expired, without rendering or consuming anything', async () => {
    const gate = heldRereads();
    const t = testApp({ deps: { loadTape: gate.loadTape } });
    const a = (await t.create('a')).body.id;
    const slow = t.ask(a, 0, diverging);
    await gate.rereading;
    const waiting = t.ask(a, 0);
    await new Promise((r) => setTimeout(r, 10));
    t.clock.advanceSeconds(3600);
    gate.release();
    await slow;
    const r = await waiting;
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({ type: 'not_found', message: expect.stringMatching(/expired/) });
  });
});
