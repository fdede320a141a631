/**
 * Timed playback (replay/playback.ts) on a fake clock: a recorded stream's events arrive at
 * the recorded time to first chunk and then evenly up to the step's duration, scaled by
 * speed; a pause holds them where they are and resuming continues without counting the pause;
 * fast playback answers the body whole.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Playback } from '../../../src/replay/playback.js';
import { buildApp, loadFixture } from '../../fixtures/replay/harness.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const SSE = Buffer.from('data: a\n\ndata: b\n\ndata: c\n\ndata: [DONE]\n\n');
const S = 1_000_000_000n;

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Reads the paced stream in the background, recording when (fake ms) each event arrived. */
function collect(stream: ReadableStream<Uint8Array>): { arrivals: [number, string][]; done: Promise<void> } {
  const arrivals: [number, string][] = [];
  const reader = stream.getReader();
  const done = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      arrivals.push([Date.now(), new TextDecoder().decode(value).trim()]);
    }
  })();
  return { arrivals, done };
}

it('fast playback answers the body whole', () => {
  expect(new Playback('fast').pace(SSE, 10n * S, 2n * S)).toBe(SSE);
});

it('recorded playback paces events by the first chunk and the duration, scaled by speed', async () => {
  const paced = new Playback('recorded', 2).pace(SSE, 8n * S, 2n * S) as ReadableStream<Uint8Array>;
  const { arrivals, done } = collect(paced);
  await vi.advanceTimersByTimeAsync(999);
  expect(arrivals).toEqual([]);
  await vi.advanceTimersByTimeAsync(5000);
  await done;
  // first at 2 s / 2; then evenly over the remaining 6 s / 2
  expect(arrivals).toEqual([
    [1000, 'data: a'],
    [2000, 'data: b'],
    [3000, 'data: c'],
    [4000, 'data: [DONE]'],
  ]);
});

it('a pause holds the stream and resuming continues without counting the pause', async () => {
  const playback = new Playback('recorded', 1);
  const { arrivals, done } = collect(playback.pace(SSE, 3n * S, 0n) as ReadableStream<Uint8Array>);
  await vi.advanceTimersByTimeAsync(1500);
  expect(arrivals.map(([, e]) => e)).toEqual(['data: a', 'data: b']);
  playback.pause();
  expect(playback.state()).toEqual({ timing: 'recorded', speed: 1, paused: true });
  await vi.advanceTimersByTimeAsync(60_000);
  expect(arrivals.length).toBe(2);
  playback.unpause();
  await vi.advanceTimersByTimeAsync(2000);
  await done;
  expect(arrivals.map(([at]) => at)).toEqual([0, 1000, 62_000, 63_000]);
});

describe('through the replay routes', () => {
  const json = (body: unknown) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  it('creates a replay with recorded timing, pauses and resumes it, and refuses a bad timing or speed', async () => {
    vi.useRealTimers();
    const fixture = loadFixture('openllmetry-openai--weather-stream');
    const { app } = buildApp({ tapes: [fixture.tape] });
    const created = await app.request('/v1/replays', json({ run: fixture.tape.run, timing: 'recorded', speed: 4 }));
    const replay = (await created.json()) as Any;
    expect([created.status, replay.playback]).toEqual([201, { paused: false, speed: 4, timing: 'recorded' }]);
    const paused = await app.request(`/v1/replays/${replay.id}`, {
      ...json({ paused: true, speed: 8 }),
      method: 'PATCH',
    });
    expect(((await paused.json()) as Any).playback).toEqual({ paused: true, speed: 8, timing: 'recorded' });
    const resumed = await app.request(`/v1/replays/${replay.id}`, { ...json({ paused: false }), method: 'PATCH' });
    expect(((await resumed.json()) as Any).playback.paused).toBe(false);
    for (const bad of [{ timing: 'slow' }, { speed: 0 }, { speed: 'fast' }]) {
      const res = await app.request('/v1/replays', json({ run: fixture.tape.run, ...bad }));
      expect([res.status, ((await res.json()) as Any).error.type]).toEqual([400, 'bad_input']);
    }
  });
});
