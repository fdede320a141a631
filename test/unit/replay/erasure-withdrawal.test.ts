/**
 * Erasure reaching replays (docs/security.md): a replay holding what an erasure covers (its
 * run, a trace or span of its steps, its tenant, a payload it referenced) answers 410
 * replay_erased naming the erasure from its next call on, frees its place among the live
 * replays at once, and withdrawn replays are bounded on their own.
 */
import { describe, expect, it } from 'vitest';
import { ErasureFeed } from '../../../src/erasure/erasure-feed.js';
import { cloneTape } from '../../fixtures/replay/harness.js';
import { errorOf, testApp, weather } from './routes-helpers.js';

const run = weather.tape.run;
const at = (key: string) => `\u0000${key}`; // the default tenant, as erasures name it

function withFeed(settings = {}) {
  const feed = new ErasureFeed();
  const other = { ...cloneTape(weather.tape), run: 'another-run' };
  const t = testApp({ settings, deps: { erasures: feed }, tapes: [cloneTape(weather.tape), other] });
  let seq = 0n;
  const erase = (notice: Omit<Parameters<ErasureFeed['record']>[0], 'id' | 'seq'>) => {
    seq++;
    feed.record({ id: `er_${seq}`, seq, ...notice });
    return `er_${seq}`;
  };
  return { t, erase };
}

describe('erasure reaching replays', () => {
  it('answers 410 replay_erased with the erasure id on every route of a replay of an erased run, and leaves other replays alone', async () => {
    const { t, erase } = withFeed();
    const erased = (await t.create(run)).body.id;
    const kept = (await t.create('another-run')).body.id;
    expect((await t.ask(erased)).status).toBe(200);

    const id = erase({ runs: [at(run)] });

    for (const reply of [
      await t.ask(erased, 1),
      await t.call('GET', `/v1/replays/${erased}`),
      await t.call('POST', `/v1/replays/${erased}/tools/next`, {}),
    ]) {
      expect([reply.status, errorOf(reply)]).toEqual([
        410,
        expect.objectContaining({ type: 'replay_erased', erasure: id }),
      ]);
    }
    expect((await t.call('GET', `/v1/replays/${kept}`)).status).toBe(200);
    expect((await t.ask(kept)).status).toBe(200);
  });

  it('withdraws a replay holding an erased span, trace or payload, or of an erased tenant', async () => {
    const step = weather.tape.steps.find((s) => s.kind === 'llm')!;
    const notices = [
      { spans: [at(`${step.trace_id}/${step.span_id}`)] },
      { traces: [at(step.trace_id)] },
      { tenant: '' },
    ];
    for (const notice of notices) {
      const { t, erase } = withFeed();
      const id = (await t.create(run)).body.id;
      erase({ spans: [at('0/0')], payloads: ['sha256/0'] }); // covers nothing it holds
      expect((await t.call('GET', `/v1/replays/${id}`)).status).toBe(200);
      const by = erase(notice);
      expect([JSON.stringify(notice), errorOf(await t.call('GET', `/v1/replays/${id}`)).erasure]).toEqual([
        JSON.stringify(notice),
        by,
      ]);
    }
  });

  it("frees a withdrawn replay's place at once, so an erasure does not lock a share out for an hour", async () => {
    const { t, erase } = withFeed({ shareMaxReplays: 2 });
    await t.create(run);
    await t.create(run);
    expect((await t.create(run)).status).toBe(429);
    erase({ runs: [at(run)] });
    expect((await t.create('another-run')).status).toBe(201);
    expect((await t.create('another-run')).status).toBe(201);
  });

  it('keeps at most the bound of withdrawn replays, forgetting the one closest to expiry (404 from then on)', async () => {
    const { t, erase } = withFeed({ shareMaxWithdrawn: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await t.create(run)).body.id);
      t.clock.advanceSeconds(10);
    }
    erase({ runs: [at(run)] });
    const statuses = [];
    for (const id of ids) statuses.push((await t.call('GET', `/v1/replays/${id}`)).status);
    expect(statuses).toEqual([404, 410, 410]);
    // a withdrawn replay answers 410 until it would have expired, then 404
    t.clock.advanceSeconds(3600);
    expect((await t.call('GET', `/v1/replays/${ids[2]}`)).status).toBe(404);
  });
});
