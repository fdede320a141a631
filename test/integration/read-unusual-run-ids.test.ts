/**
 * Run ids holding text PostgreSQL refuses (NUL, a lone surrogate) on every read route that
 * takes one: ingest stores such a run id with U+FFFD in place of each such character
 * (docs/ingest.md), so a read naming the run as it was sent finds it, and a read naming a
 * run that does not exist is 404, never a 500 from the database refusing the parameter.
 * Also a forged /v1/runs cursor: 400. Over HTTP to a running tapedeck.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/databases.js';
import {
  JSON_TYPE,
  postOtlp,
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
  traceBody,
} from '../helpers/tapedeck-server.js';

describe.each(databaseKinds)('run ids holding NUL or lone surrogates on the read routes (%s)', (kind) => {
  let t: TestTapedeck;
  const run = `odd\u0000run-${randomTraceId().slice(0, 8)}`;
  const stored = run.replace('\u0000', '\ufffd');
  const enc = encodeURIComponent;

  beforeAll(async () => {
    t = await startTestTapedeck(kind, {}, {});
    const spans = [{ traceId: randomTraceId(), spanId: randomSpanId(), attributes: { 'session.id': run } }];
    const res = await postOtlp(t, 'traces', traceBody(spans, 'json'), JSON_TYPE);
    expect(res.status).toBe(200);
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await t?.close();
  });

  const get = async (path: string) => {
    const res = await fetch(`${t.url}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('finds the run named as it was sent, with U+FFFD where the store could not hold a character', async () => {
    const tape = await get(`/v1/tapes/${enc(run)}`);
    expect([tape.status, tape.body.run]).toEqual([200, stored]);
    expect((await get(`/v1/runs/${enc(run)}/reconstruct`)).status).toBe(200);
    expect((await get(`/v1/runs/${enc(run)}/tree`)).status).toBe(200);
    const diff = await get(`/v1/diff?a=${enc(run)}&b=${enc(stored)}`);
    expect([diff.status, diff.body.a?.run, diff.body.b?.run]).toEqual([200, stored, stored]);
    const replay = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run, mode: 'loose' }),
    });
    expect([replay.status, ((await replay.json()) as { run: string }).run]).toEqual([201, stored]);
  });

  it.each(['\u0000', 'x\u0000y'])('answers 404 not_found for a run %j that does not exist', async (id) => {
    for (const path of [
      `/v1/tapes/${enc(id)}`,
      `/v1/runs/${enc(id)}/reconstruct`,
      `/v1/runs/${enc(id)}/tree`,
      `/v1/diff?a=${enc(id)}&b=${enc(run)}`,
    ]) {
      const res = await get(path);
      expect([path, res.status, res.body.error?.type]).toEqual([path, 404, 'not_found']);
    }
  });

  it.each(['\u0000', '\ud800', 'a\udc00'])(
    'answers a replay of a run %j that does not exist 404 not_found',
    async (id) => {
      // JSON.stringify escapes a lone surrogate as \udXXX, as a client's JSON would carry it
      const res = await fetch(`${t.url}/v1/replays`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ run: id }),
      });
      expect([res.status, ((await res.json()) as { error?: { type: string } }).error?.type]).toEqual([
        404,
        'not_found',
      ]);
    },
  );

  it('answers 400 bad_input for a runs cursor this server did not issue', async () => {
    for (const forged of [JSON.stringify(['1', 'a\u0000b']), JSON.stringify(['99999999999999999999', 'a'])]) {
      const res = await get(`/v1/runs?cursor=${Buffer.from(forged).toString('base64url')}`);
      expect([forged, res.status, res.body.error?.type]).toEqual([forged, 400, 'bad_input']);
    }
  });
});
