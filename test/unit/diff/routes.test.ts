import { describe, expect, it } from 'vitest';
import type { Deadline } from '../../../src/deadline/deadline.js';
import { appWith } from '../../helpers/app.js';
import { createDiffRoutes, type DiffDeps } from '../../../src/diff/routes.js';
import type { Tape } from '../../../src/normalize/step.js';
import { LATER_NS, callsOnlyLyon, callsOnlyWeather } from '../../fixtures/diff/weather-lyon.js';

const runs: Record<string, Tape> = { 'weather-7': callsOnlyWeather(), 'weather-8': callsOnlyLyon() };

function memoryDeps(
  calls: Array<{ run: string; tenant: string | null; maxSpans: number; deadline: Deadline }> = [],
): DiffDeps {
  return {
    async loadTape(run, tenant, opts) {
      calls.push({ run, tenant, ...opts });
      return runs[run];
    },
  };
}

const settings = { queryDeadlineMs: 5_000, pricing: null, nowNs: () => LATER_NS };

async function get(routes: ReturnType<typeof createDiffRoutes>, query: string) {
  const res = await appWith(routes).request(`/v1/diff${query}`);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('GET /v1/diff', () => {
  it('answers the diff with sorted keys and exact nanoseconds', async () => {
    const calls: Parameters<typeof memoryDeps>[0] = [];
    const app = createDiffRoutes(memoryDeps(calls), { ...settings, tenantOf: () => 'acme' });
    const res = await get(app, '?a=weather-7&b=weather-8');
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expect(
      res.text.startsWith(
        '{"a":{"cost_usd":null,"duration_ns":89618575,"errors":0,"outcome":"success","run":"sess-openllmetry-openai-weather"',
      ),
    ).toBe(true);
    const body = JSON.parse(res.text);
    expect(body.first_divergence).toMatchObject({ a: 0, b: 0, kind: 'input' });
    expect(calls.map((c) => [c.run, c.tenant, c.maxSpans])).toEqual([
      ['weather-7', 'acme', 50_000],
      ['weather-8', 'acme', 50_000],
    ]);
  });

  it('releases the deadline once it has answered, so nothing holding it keeps running', async () => {
    const calls: Parameters<typeof memoryDeps>[0] = [];
    await get(createDiffRoutes(memoryDeps(calls), settings), '?a=weather-7&b=weather-8');
    expect(calls[0].deadline.signal.aborted).toBe(true);
    expect(() => calls[0].deadline.check()).toThrow(/already answered/);
  });

  it('answers 400 bad_input when a run is missing', async () => {
    const app = createDiffRoutes(memoryDeps(), settings);
    for (const query of ['', '?a=weather-7', '?b=weather-7', '?a=&b=weather-7']) {
      const res = await get(app, query);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error.type).toBe('bad_input');
    }
    expect(JSON.parse((await get(app, '?a=weather-7')).text).error.message).toMatch(
      /^missing run b: GET \/v1\/diff\?a=<run>&b=<run>/,
    );
  });

  it('answers 404 not_found naming the run that does not exist', async () => {
    const res = await get(createDiffRoutes(memoryDeps(), settings), '?a=weather-7&b=nope');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({ error: { type: 'not_found', message: 'run b ("nope") was not found' } });
  });

  it('answers 400 deadline_exceeded on time when the reads overrun, and never diffs after answering', async () => {
    const seen: Deadline[] = [];
    let finished = 0;
    const slow: DiffDeps = {
      async loadTape(run, _tenant, { deadline }) {
        seen.push(deadline);
        // a read that ignores its signal and takes far longer than the budget
        await new Promise((resolve) => setTimeout(resolve, 300));
        finished++;
        return runs[run];
      },
    };
    const app = createDiffRoutes(slow, { ...settings, queryDeadlineMs: 30 });
    const res = await get(app, '?a=weather-7&b=weather-8');
    expect(res.status).toBe(400);
    const body = JSON.parse(res.text);
    expect(body.error.type).toBe('deadline_exceeded');
    expect(body.error.message).toMatch(
      /within its 30 ms budget \(--query-deadline-ms\); it was stopped while reading the runs/,
    );
    expect(finished).toBe(0); // answered before the reads came back
    expect(seen[0].signal.aborted).toBe(true); // reads were told to stop
    const checks = seen[0].checks;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(finished).toBe(2);
    expect(seen[0].checks).toBe(checks); // the late tapes were never diffed
  });

  it('answers 400 deadline_exceeded when a read gives up on its aborted signal', async () => {
    const abortable: DiffDeps = {
      loadTape: (_run, _tenant, { deadline }) =>
        new Promise((_resolve, reject) => {
          deadline.signal.addEventListener('abort', () => reject(new Error('query canceled')));
        }),
    };
    const res = await get(
      createDiffRoutes(abortable, { ...settings, queryDeadlineMs: 20 }),
      '?a=weather-7&b=weather-8',
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error.type).toBe('deadline_exceeded');
  });

  it('reads a run once when it is compared with itself', async () => {
    const calls: Parameters<typeof memoryDeps>[0] = [];
    const res = await get(createDiffRoutes(memoryDeps(calls), settings), '?a=weather-7&b=weather-7');
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(JSON.parse(res.text).first_divergence).toBeNull();
  });
});
