import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/logger.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { cloneTape } from '../../fixtures/replay/harness.js';
import { errorOf, testApp, weather } from './routes-helpers.js';

describe('POST /v1/replays', () => {
  it('creates a strict replay by default and answers its id, counts, expiry and base URLs', async () => {
    const t = testApp();
    const r = await t.create(weather.tape.run);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      run: weather.tape.run,
      mode: 'strict',
      steps: 3,
      llm_steps: 2,
      unreadable_tool_steps: [],
    });
    expect(r.body.id).toMatch(/^rp_[0-9a-f]{32}$/);
    expect(r.text).toContain(`"expires_at_ns":${t.clock.ns + 3_600_000_000_000n}`); // an exact integer
    expect(r.body.base_urls).toEqual({
      openai: `http://localhost/v1/replays/${r.body.id}/openai/v1`,
      anthropic: `http://localhost/v1/replays/${r.body.id}/anthropic`,
    });
    expect(Object.keys(r.body)).toEqual([...Object.keys(r.body)].sort()); // sorted keys
  });

  it('builds base URLs on the origin the deps give', async () => {
    const t = testApp({ deps: { baseUrl: () => 'https://tapedeck.example:8443/' } });
    const r = await t.create(weather.tape.run);
    expect(r.body.base_urls.openai).toBe(`https://tapedeck.example:8443/v1/replays/${r.body.id}/openai/v1`);
  });

  it('answers 400 bad_input for a body without a run, an unknown mode, or malformed JSON', async () => {
    const t = testApp();
    for (const [body, pattern] of [
      [{}, /must name a run/],
      [{ run: weather.tape.run, mode: 'fuzzy' }, /mode must be/],
      ['{"run":', /malformed JSON/],
      ['[]', /JSON object/],
    ] as const) {
      const r = await t.call('POST', '/v1/replays', body);
      expect(r.status).toBe(400);
      expect(errorOf(r)).toMatchObject({ type: 'bad_input', message: expect.stringMatching(pattern) });
    }
  });

  it('answers 404 not_found for an unknown run', async () => {
    const r = await testApp().create('no-such-run');
    expect(r.status).toBe(404);
    expect(errorOf(r)).toEqual({ type: 'not_found', message: 'no run "no-such-run"' });
  });

  it('refuses 409 answer_not_recorded, naming the model step that has no recorded answer', async () => {
    const tape = cloneTape(weather.tape);
    tape.steps[2].response = null;
    const r = await testApp({ tapes: [tape] }).create(tape.run);
    expect(r.status).toBe(409);
    expect(r.headers.get('x-should-retry')).toBe('false');
    expect(errorOf(r)).toMatchObject({
      type: 'replay_refused',
      reason: 'answer_not_recorded',
      step: 2,
      message: expect.stringMatching(/model step 2 has no recorded answer/),
    });
  });

  it('refuses 409 answer_unreadable saying whether the offloaded answer was erased, swept by retention or past --tape-max-bytes', async () => {
    for (const why of ['erased', 'retention', 'budget'] as const) {
      const t = testApp({ settings: why === 'budget' ? { tapeMaxBytes: 16 } : {} });
      const tape = cloneTape(weather.tape);
      const ref = t.payloads.put(tape.steps[2].response!);
      if (why !== 'budget') t.payloads.remove(ref.$payload, why);
      tape.steps[2].response = ref;
      t.tapes.set(tape.run, tape);
      const r = await t.create(tape.run);
      expect(r.status).toBe(409);
      const expected = { erased: /was erased/, retention: /swept by retention/, budget: /past --tape-max-bytes/ }[why];
      expect(errorOf(r)).toMatchObject({
        type: 'replay_refused',
        reason: 'answer_unreadable',
        step: 2,
        message: expect.stringMatching(expected),
      });
    }
  });

  it('refuses 409 prompt_not_messages in strict mode for a bare prompt, and serves it in loose mode as not matched', async () => {
    const tape = cloneTape(weather.tape);
    tape.steps[0].request = { model: 'gpt-4o-mini', messages: tape.steps[0].request } as unknown as JsonValue;
    const t = testApp({ tapes: [tape] });
    const strict = await t.create(tape.run);
    expect(strict.status).toBe(409);
    expect(errorOf(strict)).toMatchObject({
      type: 'replay_refused',
      reason: 'prompt_not_messages',
      step: 0,
      message: expect.stringMatching(/JSON object.*loose/),
    });
    const loose = await t.create(tape.run, 'loose');
    expect(loose.status).toBe(201);
    expect((await t.ask(loose.body.id, 0)).status).toBe(200);
    expect((await t.ask(loose.body.id, 1)).status).toBe(200);
    const status = await t.call('GET', `/v1/replays/${loose.body.id}`);
    expect(status.body.calls.map((c: { matched: boolean }) => c.matched)).toEqual([false, true]);
  });

  it('refuses 409 run_too_long for a run over 20,000 spans or a tape that was cut', async () => {
    for (const over of [{ spans_examined: 20_001 }, { truncated: true }]) {
      const tape = { ...cloneTape(weather.tape), ...over };
      const r = await testApp({ tapes: [tape] }).create(tape.run);
      expect(r.status).toBe(409);
      expect(errorOf(r)).toMatchObject({
        type: 'replay_refused',
        reason: 'run_too_long',
        message: expect.stringMatching(/more than 20000 spans/),
      });
    }
    const atBound = { ...cloneTape(weather.tape), spans_examined: 20_000 };
    expect((await testApp({ tapes: [atBound] }).create(atBound.run)).status).toBe(201);
  });

  it('lists tool steps that recorded no result or whose offloaded value cannot be read', async () => {
    const t = testApp();
    const tape = cloneTape(weather.tape);
    const toolStep = { ...tape.steps[1], index: 3, span_id: 'x' };
    tape.steps[1].response = null;
    const ref = t.payloads.put({ big: true });
    t.payloads.remove(ref.$payload, 'erased');
    toolStep.response = ref;
    tape.steps.push(toolStep);
    t.tapes.set(tape.run, tape);
    const r = await t.create(tape.run);
    expect(r.status).toBe(201);
    expect(r.body.unreadable_tool_steps).toEqual([1, 3]);
  });

  it('answers 500 internal when the tape cannot be loaded, without leaking the cause', async () => {
    const told: unknown[] = [];
    const logger = { error: (fields: { err: unknown }) => told.push(fields.err) } as unknown as Logger;
    const t = testApp({
      deps: {
        loadTape: async () => {
          throw new Error('database is down: password=secret');
        },
      },
      logger,
    });
    const r = await t.create('x');
    expect(r.status).toBe(500);
    expect(told).toEqual([new Error('database is down: password=secret')]);
    expect(errorOf(r)).toEqual({ type: 'internal', message: 'internal error; see the server log' });
  });
});

describe("credentials, checked by the application's auth middleware", () => {
  const tokens = [
    'acme:acme-key-0000000000000:ro:acme',
    'other:other-key-000000000000:ro:other',
    'ops:ops-key-00000000000000:admin',
  ].join(',');
  const key = { acme: 'acme-key-0000000000000', other: 'other-key-000000000000', ops: 'ops-key-00000000000000' };

  it('accepts Authorization: Bearer and x-api-key, answers 401 unauthorized otherwise', async () => {
    const t = testApp({ tokens });
    expect((await t.create(weather.tape.run, undefined, { authorization: `Bearer ${key.acme}` })).status).toBe(201);
    expect((await t.create(weather.tape.run, undefined, { 'x-api-key': key.acme })).status).toBe(201);
    for (const headers of [{}, { authorization: 'Bearer wrong-key-0000000000' }, { 'x-api-key': 'wrong' }] as Record<
      string,
      string
    >[]) {
      const r = await t.create(weather.tape.run, undefined, headers);
      expect(r.status).toBe(401);
      expect(errorOf(r)).toMatchObject({ type: 'unauthorized' });
    }
  });

  it("reads the run as the credential's tenant and hides a replay from other tenants behind 404", async () => {
    const seenTenants: (string | null)[] = [];
    const t = testApp({
      tokens,
      deps: {
        loadTape: async (run, tenant) => {
          seenTenants.push(tenant);
          return run === weather.tape.run ? weather.tape : undefined;
        },
      },
    });
    const r = await t.create(weather.tape.run, undefined, { authorization: `Bearer ${key.acme}` });
    expect(seenTenants).toEqual(['acme']);
    const foreign = await t.call('GET', `/v1/replays/${r.body.id}`, undefined, {
      authorization: `Bearer ${key.other}`,
    });
    expect(foreign.status).toBe(404);
    expect(errorOf(foreign).type).toBe('not_found');
    expect((await t.call('GET', `/v1/replays/${r.body.id}`, undefined, { 'x-api-key': key.acme })).status).toBe(200);
    expect((await t.call('GET', `/v1/replays/${r.body.id}`, undefined, { 'x-api-key': key.ops })).status).toBe(200);
  });
});
