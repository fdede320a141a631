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
