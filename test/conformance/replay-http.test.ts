/**
 * NOTE: the replay routes over a real socket, where the request body is read from the Node
 * request itself: the body bound holds for declared and chunked bodies, and a body an upstream
 * middleware already read is still readable (test/unit/replay/routes-calls.test.ts).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixture, type ReplayHarness, startReplayServer } from '../fixtures/replay/harness.js';

const weather = loadFixture('openllmetry-openai--weather');
let h: ReplayHarness;

beforeAll(async () => {
  h = await startReplayServer({ tapes: [weather.tape], settings: { maxRequestBytes: 4096 } });
});
afterAll(async () => h.close());

function send(
  path: string,
  chunks: string[],
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: h.port, path, method: 'POST', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (p) => parts.push(p));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('request bodies on a real socket', () => {
  it('answers 413 too_large for a declared length over the bound, and for a chunked body that grows past it', async () => {
    const { id } = await h.createReplay(weather.tape.run);
    const path = `/v1/replays/${id}/openai/v1/chat/completions`;
    const big = JSON.stringify({ ...weather.calls[0].request, padding: 'x'.repeat(8000) });
    const declared = await send(path, [big], {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(big)),
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toEqual({
      error: { type: 'too_large', message: 'the request body is larger than 4096 bytes' },
    });
    const chunked = await send(path, [big.slice(0, 3000), big.slice(3000)], {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expect(chunked.status).toBe(413);
    // nothing was consumed; a chunked body within the bound is served
    const body = JSON.stringify(weather.calls[0].request);
    const ok = await send(path, [body.slice(0, 100), body.slice(100)], {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body).choices[0].finish_reason).toBe('tool_calls');
  });
});
