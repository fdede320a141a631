import { describe, expect, it } from 'vitest';
import { cloneTape } from '../../fixtures/replay/harness.js';
import { errorOf, testApp, weather } from './routes-helpers.js';

const changed = (id: string) => ({
  messages: [{ role: 'system', content: `changed ${id}` }, weather.calls[0].request.messages[1]],
});

describe('model calls through a replay', () => {
  it('answers 400 unsupported_endpoint for the Responses API, embeddings, legacy completions and anything else under a base URL', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run)).body;
    for (const [method, path] of [
      ['POST', 'openai/v1/responses'],
      ['POST', 'openai/v1/embeddings'],
      ['POST', 'openai/v1/completions'],
      ['GET', 'openai/v1/chat/completions'],
      ['POST', 'anthropic/v1/messages/count_tokens'],
      ['GET', 'openai/v1/models'],
    ]) {
      const r = await t.call(
        method,
        `/v1/replays/${id}/${path}`,
        method === 'GET' ? undefined : { model: 'x', input: 'hi' },
      );
      expect(r.status).toBe(400);
      expect(errorOf(r)).toMatchObject({ type: 'unsupported_endpoint', message: expect.stringContaining(path) });
    }
    expect((await t.call('GET', `/v1/replays/${id}`)).body.served).toBe(0);
  });

  it('answers 400 bad_input for a body without messages', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run)).body;
    const r = await t.call('POST', `/v1/replays/${id}/anthropic/v1/messages`, { model: 'claude', prompt: 'hi' });
    expect(r.status).toBe(400);
    expect(errorOf(r)).toEqual({ type: 'bad_input', message: 'the anthropic request has no "messages" array' });
  });

  it('answers 404 not_found for an unknown replay and for one past its hour', async () => {
    const t = testApp();
    const unknown = await t.ask('rp_00000000000000000000000000000000');
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).type).toBe('not_found');
    const { id } = (await t.create(weather.tape.run)).body;
    t.clock.advanceSeconds(3600);
    for (const r of [
      await t.ask(id),
      await t.call('GET', `/v1/replays/${id}`),
      await t.call('POST', `/v1/replays/${id}/tools/next`),
    ]) {
      expect(r.status).toBe(404);
      expect(errorOf(r).type).toBe('not_found');
    }
  });

  it('answers 413 too_large for a body over the bound', async () => {
    const t = testApp({ settings: { maxRequestBytes: 1024 } });
    const { id } = (await t.create(weather.tape.run)).body;
    const r = await t.ask(id, 0, { padding: 'x'.repeat(2000) });
    expect(r.status).toBe(413);
    expect(errorOf(r)).toMatchObject({ type: 'too_large' });
  });

  it('refuses a changed request 409 replay_divergence with both digests and the first difference, without consuming the step', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run)).body;
    const r = await t.ask(id, 0, changed('prompt'));
    expect(r.status).toBe(409);
    expect(r.headers.get('x-should-retry')).toBe('false');
    expect(errorOf(r)).toEqual({
      type: 'replay_divergence',
      step: 0,
      message:
        "this request's messages do not match recorded step 0: the agent diverged from the recording, so replaying the recorded answer would answer a different question",
      expected_digest: weather.tape.steps[0].request_digest,
      got_digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      difference: {
        message: 0,
        role: 'system',
        field: 'content',
        at_char: 0,
        recorded: weather.calls[0].request.messages[0].content,
        got: 'changed prompt',
      },
    });
    const ok = await t.ask(id, 0);
    expect(ok.status).toBe(200);
    const status = (await t.call('GET', `/v1/replays/${id}`)).body;
    expect(status).toMatchObject({
      served: 1,
      remaining: 1,
      diverged: { step: 0, expected_digest: weather.tape.steps[0].request_digest },
    });
  });

  it('remembers only the first divergence, and explains at most 8 of them per replay', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run)).body;
    const replies = [];
    for (let i = 0; i < 10; i++) replies.push(await t.ask(id, 0, changed(String(i))));
    expect(replies.every((r) => r.status === 409)).toBe(true);
    expect(replies.map((r) => 'difference' in errorOf(r))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    const status = (await t.call('GET', `/v1/replays/${id}`)).body;
    expect(status.diverged.difference.got).toBe('changed 0');
  });

  it('serves a request with the recorded messages and a different model: only messages are compared', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run)).body;
    const r = await t.ask(id, 0, { model: 'gpt-5', temperature: 1, tools: [] });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe('gpt-4o-mini-2024-07-18');
  });

  it('serves loose mode in order whatever is asked, recording whether each call matched', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run, 'loose')).body;
    expect((await t.ask(id, 0, changed('x'))).body.choices[0].finish_reason).toBe('tool_calls');
    expect((await t.ask(id, 1)).body.choices[0].finish_reason).toBe('stop');
    const status = (await t.call('GET', `/v1/replays/${id}`)).body;
    expect(status.calls.map((c: { step: number; matched: boolean }) => [c.step, c.matched])).toEqual([
      [0, false],
      [2, true],
    ]);
    expect(status.diverged).toBeNull();
  });

  it('answers 410 replay_exhausted past the last model step and counts each such call', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run)).body;
    await t.ask(id, 0);
    await t.ask(id, 1);
    for (let i = 0; i < 2; i++) {
      const r = await t.ask(id, 1);
      expect(r.status).toBe(410);
      expect(errorOf(r)).toMatchObject({ type: 'replay_exhausted', served: 2 });
    }
    expect((await t.call('GET', `/v1/replays/${id}`)).body).toMatchObject({
      served: 2,
      remaining: 0,
      exhausted_calls: 2,
    });
  });

  it('refuses 409 response_too_large past the response bound without consuming the step; the same step unstreamed may fit', async () => {
    const t = testApp({ settings: { maxResponseBytes: 1000 } });
    const { id } = (await t.create(weather.tape.run)).body;
    const r = await t.ask(id, 0, { stream: true, stream_options: { include_usage: true } });
    expect(r.status).toBe(409);
    expect(r.headers.get('x-should-retry')).toBe('false');
    expect(errorOf(r)).toMatchObject({
      type: 'response_too_large',
      step: 0,
      limit_bytes: 1000,
      message: expect.stringMatching(/unstreamed may fit/),
    });
    const plain = await t.ask(id, 0);
    expect(plain.status).toBe(200);
    expect(plain.body.choices[0].message.tool_calls[0].id).toBe('call_7w50k7Zc7pEwJE9VM3wenGVq');
  });

  it('reports status: served, remaining, diverged, calls with step, matched and at_ns, exhausted calls, unreadable tool steps, expiry, playback', async () => {
    const t = testApp();
    const created = (await t.create(weather.tape.run)).body;
    const at = t.clock.ns;
    await t.ask(created.id, 0);
    const r = await t.call('GET', `/v1/replays/${created.id}`);
    expect(r.status).toBe(200);
    expect(r.text).toBe(
      `{"calls":[{"at_ns":${at},"matched":true,"step":0}],"diverged":null,"exhausted_calls":0,"expires_at_ns":${at + 3_600_000_000_000n},"id":"${created.id}","mode":"strict","playback":{"paused":false,"speed":1,"timing":"fast"},"remaining":1,"run":"${weather.tape.run}","served":1,"unreadable_tool_steps":[]}`,
    );
  });
});

describe('POST /v1/replays/{id}/tools/next', () => {
  function twoTools() {
    const tape = cloneTape(weather.tape);
    tape.steps.push({
      ...tape.steps[1],
      index: 3,
      tool: 'get_time',
      name: 'get_time.tool',
      request: { tz: 'CET' },
      response: '',
    });
    tape.steps.push({ ...tape.steps[1], index: 4, request: { city: 'Lyon' }, response: null });
    return tape;
  }

  it('serves recorded tool steps in order on a cursor of its own, by name when given, and 410 tools_exhausted when none is left', async () => {
    const t = testApp({ tapes: [twoTools()] });
    const { id } = (await t.create(weather.tape.run)).body;
    await t.ask(id, 0); // the model cursor moves independently
    const time = await t.call('POST', `/v1/replays/${id}/tools/next`, { tool: 'get_time' });
    expect(time.body).toEqual({ step: 3, tool: 'get_time', arguments: { tz: 'CET' }, result: '' }); // an empty result is a result
    const first = await t.call('POST', `/v1/replays/${id}/tools/next`);
    expect(first.body).toEqual({
      step: 1,
      tool: 'get_weather',
      arguments: { city: 'Paris' },
      result: weather.tape.steps[1].response,
    });
    const none = await t.call('POST', `/v1/replays/${id}/tools/next`, { tool: 'get_time' });
    expect(none.status).toBe(410);
    expect(errorOf(none)).toMatchObject({ type: 'tools_exhausted', tool: 'get_time' });
    expect((await t.call('GET', `/v1/replays/${id}`)).body.served).toBe(1);
  });

  it('refuses 409 tool_unreadable for a step that recorded no result, and does not move past it', async () => {
    const t = testApp({ tapes: [twoTools()] });
    const { id, unreadable_tool_steps } = (await t.create(weather.tape.run)).body;
    expect(unreadable_tool_steps).toEqual([4]);
    await t.call('POST', `/v1/replays/${id}/tools/next`, { tool: 'get_weather' });
    for (let i = 0; i < 2; i++) {
      const r = await t.call('POST', `/v1/replays/${id}/tools/next`, { tool: 'get_weather' });
      expect(r.status).toBe(409);
      expect(errorOf(r)).toMatchObject({
        type: 'tool_unreadable',
        step: 4,
        tool: 'get_weather',
        message: expect.stringMatching(/recorded no result/),
      });
    }
  });

  it('answers 400 bad_input when tool is not a name', async () => {
    const t = testApp();
    const { id } = (await t.create(weather.tape.run)).body;
    const r = await t.call('POST', `/v1/replays/${id}/tools/next`, { tool: 5 });
    expect(r.status).toBe(400);
    expect(errorOf(r).type).toBe('bad_input');
  });
});

describe('request bodies', () => {
  it('still reads a body an upstream middleware of the main app already read', async () => {
    const { Hono } = await import('hono');
    const { createReplayRoutes } = await import('../../../src/replay/index.js');
    const root = new Hono();
    root.use('*', async (c, next) => {
      if (c.req.method === 'POST') await c.req.json(); // e.g. an audit log
      await next();
    });
    root.route(
      '/v1/replays',
      createReplayRoutes({ loadTape: async () => weather.tape, readPayload: async () => undefined }),
    );
    const post = (path: string, body: unknown) =>
      root.request(path, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
    const { id } = (await (await post('/v1/replays', { run: weather.tape.run })).json()) as { id: string };
    const r = await post(`/v1/replays/${id}/openai/v1/chat/completions`, weather.calls[0].request);
    expect(r.status).toBe(200);
  });
});
