import { describe, expect, it } from 'vitest';
import { replayBaseBytes } from '../../../src/replay/snapshot.js';
import { defaultReplaySettings } from '../../../src/replay/settings.js';
import { cloneTape } from '../../fixtures/replay/harness.js';
import { errorOf, testApp, weather } from './routes-helpers.js';

const MiB = 1024 * 1024;
// two tenant-bound credentials and an admin's (the operator view)
const tokens =
  'acme:acme-secret-0000000000:ro:acme,beta:beta-secret-0000000000:ro:beta,ops:ops-secret-0000000000:admin';
const as = (key: string) => ({ authorization: `Bearer ${key}-secret-0000000000` });

describe('the replay registry', () => {
  it('charges each replay its call log at full bound, so a share holds its 64 replays with room to spare', () => {
    expect(replayBaseBytes(defaultReplaySettings)).toBeGreaterThanOrEqual(4096 * 24);
    expect(64 * replayBaseBytes(defaultReplaySettings)).toBeLessThan(defaultReplaySettings.shareMaxBytes / 4);
  });

  it('answers 429 too_many_replays with Retry-After when a share holds its count, the time until its first replay expires', async () => {
    const t = testApp({ settings: { shareMaxReplays: 2 }, tokens });
    expect((await t.create(weather.tape.run, undefined, as('acme'))).status).toBe(201);
    t.clock.advanceSeconds(600);
    expect((await t.create(weather.tape.run, undefined, as('acme'))).status).toBe(201);
    t.clock.advanceSeconds(100);
    const r = await t.create(weather.tape.run, undefined, as('acme'));
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe(String(3600 - 700));
    expect(errorOf(r)).toMatchObject({ type: 'too_many_replays', retry_after_seconds: 2900 });
    // another share is not affected, and neither is the operator view
    expect((await t.create(weather.tape.run, undefined, as('beta'))).status).toBe(201);
    expect((await t.create(weather.tape.run, undefined, as('ops'))).status).toBe(201);
    // once the first expires, the share has room again; a live replay was never evicted
    t.clock.advanceSeconds(2900);
    expect((await t.create(weather.tape.run, undefined, as('acme'))).status).toBe(201);
  });

  it('gives a bound credential a flat Retry-After at the whole-registry bound, and the operator view the time until room frees', async () => {
    const t = testApp({ settings: { totalMaxReplays: 2 }, tokens });
    await t.create(weather.tape.run, undefined, as('acme'));
    t.clock.advanceSeconds(10);
    await t.create(weather.tape.run, undefined, as('beta'));
    const bound = await t.create(weather.tape.run, undefined, as('acme'));
    expect(bound.status).toBe(429);
    expect(bound.headers.get('retry-after')).toBe('60');
    const operator = await t.create(weather.tape.run, undefined, as('ops'));
    expect(operator.status).toBe(429);
    expect(operator.headers.get('retry-after')).toBe('3590');
  });

  it("answers 429 when a share's counted memory is full, and 409 snapshot_too_large for a snapshot larger than a whole share", async () => {
    const big = cloneTape(weather.tape);
    big.run = 'big';
    (big.steps[2].response as { content: string }[])[0].content = 'x'.repeat(300_000); // ~600 KB counted as UTF-16
    const t = testApp({
      tapes: [weather.tape, big],
      settings: { shareMaxBytes: 1 * MiB, totalMaxBytes: 8 * MiB },
      tokens,
    });
    expect((await t.create('big', undefined, as('acme'))).status).toBe(201);
    const full = await t.create('big', undefined, as('acme'));
    expect(full.status).toBe(429);
    expect(Number(full.headers.get('retry-after'))).toBe(3600);
    expect((await t.create(weather.tape.run, undefined, as('acme'))).status).toBe(201); // a small one still fits

    const tiny = testApp({ tapes: [big, weather.tape], settings: { shareMaxBytes: 512 * 1024 } });
    const r = await tiny.create('big');
    expect(r.status).toBe(409);
    expect(r.headers.get('retry-after')).toBeNull();
    expect(errorOf(r)).toMatchObject({ type: 'replay_refused', reason: 'snapshot_too_large' });
    // the refused build released what it had charged
    expect((await tiny.create(weather.tape.run)).status).toBe(201);
  });

  it('refuses a snapshot as soon as building passes the share, before reading the rest of the run', async () => {
    const t = testApp({ settings: { shareMaxBytes: 256 * 1024 } });
    const tape = cloneTape(weather.tape);
    const refs = [];
    for (let i = 0; i < 50; i++) {
      const ref = t.payloads.put({ data: 'y'.repeat(20_000) });
      refs.push(ref);
      tape.steps.push({ ...tape.steps[1], index: 3 + i, span_id: `t${i}`, response: ref });
    }
    t.tapes.set(tape.run, tape);
    const r = await t.create(tape.run);
    expect(r.status).toBe(409);
    expect(errorOf(r).reason).toBe('snapshot_too_large');
    expect(t.payloads.reads).toBeLessThan(refs.length);
  });
});
