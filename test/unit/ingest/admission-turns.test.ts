/**
 * Of the requests admitted (src/ingest/admission.ts), only as many as the work units allow
 * work at once: a request takes a unit per 4 MiB begun, three at most, and three when it
 * says no size (one large request at a time); a compressed one takes two until it is decoded. The others wait
 * their turn in arrival order without being refused, and a turn passes on however the work
 * ends.
 */
import { describe, expect, it } from 'vitest';
import { createAdmission, DEFAULT_WORK_UNITS, UNIT_BYTES, workUnitsOf } from '../../../src/ingest/admission.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
const tick = () => new Promise((r) => setTimeout(r, 5));
const SMALL = 1024;
/** over 4 MiB and up to 8: two units */
const MID = UNIT_BYTES + 1;
/** over 8 MiB: three units */
const LARGE = 2 * UNIT_BYTES + 1;

describe('admission turns', () => {
  it('lets requests work while units are free and the others wait, in arrival order', async () => {
    const admission = createAdmission(10, 2);
    const started: string[] = [];
    const gates = new Map(['a', 'b', 'c', 'd'].map((k) => [k, gate()]));
    const runs = [...gates].map(([k, g]) =>
      admission.run(
        async () => {
          started.push(k);
          await g.opened;
          return k;
        },
        { sizeBytes: SMALL },
      ),
    );
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect(admission.inflight).toBe(4);
    gates.get('b')!.open();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    gates.get('a')!.open();
    await tick();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    gates.get('c')!.open();
    gates.get('d')!.open();
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c', 'd']);
    expect(admission.inflight).toBe(0);
  });

  it('gives a large request, or one of unknown size, three units, and lets no small one overtake it', async () => {
    expect(
      [SMALL, UNIT_BYTES, MID, 2 * UNIT_BYTES, LARGE, 64 * UNIT_BYTES, undefined].map((size) => workUnitsOf(size)),
    ).toEqual([1, 1, 2, 2, 3, 3, 3]);
    const admission = createAdmission(10, 4);
    const started: string[] = [];
    const gates = new Map(['small', 'large', 'later'].map((k) => [k, gate()]));
    const sizes: Record<string, number> = { small: SMALL, large: LARGE, later: SMALL };
    const runs = [...gates].map(([k, g]) =>
      admission.run(
        async () => {
          started.push(k);
          await g.opened;
        },
        { sizeBytes: sizes[k] },
      ),
    );
    await tick();
    expect(started).toEqual(['small', 'large']);
    gates.get('large')!.open();
    await tick();
    expect(started).toEqual(['small', 'large', 'later']);
    for (const g of gates.values()) g.open();
    await Promise.all(runs);
  });

  it('runs a request larger than the whole capacity alone rather than never', async () => {
    const admission = createAdmission(10, 1);
    expect(await admission.run(async () => 'ran', { sizeBytes: LARGE })).toBe('ran');
  });

  it('counts waiting requests against the in-flight limit', async () => {
    const admission = createAdmission(2, 1);
    const g = gate();
    const first = admission.run(() => g.opened, { sizeBytes: SMALL });
    const second = admission.run(async () => 'second', { sizeBytes: SMALL });
    await expect(admission.run(async () => 'third', { sizeBytes: SMALL })).rejects.toMatchObject({ kind: 'busy' });
    g.open();
    await first;
    expect(await second).toBe('second');
  });

  it('passes the turn on when the work fails', async () => {
    const admission = createAdmission(4, 1);
    const failed = admission.run(
      async () => {
        throw new Error('write failed');
      },
      { sizeBytes: SMALL },
    );
    const next = admission.run(async () => 'next', { sizeBytes: SMALL });
    await expect(failed).rejects.toThrow('write failed');
    expect(await next).toBe('next');
    expect(await admission.run(async () => 'after', { sizeBytes: SMALL })).toBe('after');
  });

  it('works on four requests of up to 4 MiB, two of up to 8, or one larger and one small, at once by default: never two larger', async () => {
    expect(DEFAULT_WORK_UNITS).toBe(4);
    for (const [sizes, first] of [
      [[SMALL, SMALL, SMALL, SMALL, SMALL], 4],
      [[LARGE, LARGE, SMALL], 1],
      [[LARGE, SMALL, SMALL, LARGE], 2],
      [[SMALL, SMALL, LARGE, SMALL], 2],
      // just over 4 MiB does not hold the next one up, as it did in one step from one unit to three
      [[MID, MID, SMALL], 2],
      [[MID, SMALL, SMALL, MID], 3],
      [[MID, LARGE, SMALL], 1],
    ] as const) {
      const admission = createAdmission(10);
      const started: number[] = [];
      const g = gate();
      const runs = sizes.map((size, i) =>
        admission.run(
          async () => {
            started.push(i);
            await g.opened;
          },
          { sizeBytes: size },
        ),
      );
      await tick();
      expect(started).toEqual(sizes.slice(0, first).map((_, i) => i));
      g.open();
      await Promise.all(runs);
      expect(started).toEqual(sizes.map((_, i) => i));
    }
  });
});

describe('admission waits', () => {
  const full = (admission: ReturnType<typeof createAdmission>) => {
    const g = gate();
    const working = Array.from({ length: 4 }, () => admission.run(() => g.opened, { sizeBytes: SMALL }));
    return { release: () => g.open(), done: () => Promise.all(working) };
  };

  it('refuses a request whose turn has not come within the queue timeout as busy, and lets the rest go on', async () => {
    const admission = createAdmission(10, 4, { queueTimeoutMs: 30 });
    const busy = full(admission);
    const error = await admission.run(async () => 'never', { sizeBytes: SMALL }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: 'busy',
      retryAfterSeconds: 1,
      message: 'no turn to store this export request within 30 ms (--queue-timeout-ms); retry shortly',
    });
    expect(admission.inflight).toBe(4);
    busy.release();
    await busy.done();
    expect(await admission.run(async () => 'after', { sizeBytes: SMALL })).toBe('after');
  });

  it('waits no longer than the request allows (a gRPC deadline)', async () => {
    const admission = createAdmission(10, 4, { queueTimeoutMs: 60_000 });
    const busy = full(admission);
    const started = Date.now();
    await expect(admission.run(async () => 'never', { waitMs: 30 })).rejects.toMatchObject({
      kind: 'busy',
      message: 'no turn to store this export request before its deadline (30 ms); retry shortly',
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    busy.release();
    await busy.done();
  });

  it('stops waiting when the signal aborts, and never runs the work', async () => {
    const admission = createAdmission(10, 4);
    const busy = full(admission);
    const cancelled = new AbortController();
    let ran = false;
    const waiting = admission.run(
      async () => {
        ran = true;
      },
      { signal: cancelled.signal },
    );
    await tick();
    expect(admission.inflight).toBe(5);
    cancelled.abort();
    await expect(waiting).rejects.toMatchObject({ kind: 'unavailable' });
    expect(admission.inflight).toBe(4);
    busy.release();
    await busy.done();
    expect(ran).toBe(false);
  });

  it('bounds the bytes that waiting requests hold, and counts none for a request that starts at once', async () => {
    const admission = createAdmission(10, 4, { maxHeldBytes: 100 });
    expect(await admission.run(async () => 'at once', { heldBytes: 1_000 })).toBe('at once');
    const busy = full(admission);
    const first = admission.run(async () => 'first', { sizeBytes: 60, heldBytes: 60 });
    await expect(admission.run(async () => 'second', { sizeBytes: 60, heldBytes: 60 })).rejects.toMatchObject({
      kind: 'busy',
      message: 'export requests waiting their turn already hold 60 bytes (limit 100); retry shortly',
    });
    const small = admission.run(async () => 'small', { sizeBytes: 40, heldBytes: 40 });
    busy.release();
    expect(await Promise.all([first, small])).toEqual(['first', 'small']);
    await busy.done();
  });

  it('takes two units for a compressed request until it is decoded, and gives one back when it is small', async () => {
    const admission = createAdmission(10, 4);
    const started: string[] = [];
    const decodedGate = gate();
    const finish = gate();
    const compressed = ['a', 'b', 'c'].map((k) =>
      admission.run(
        async (turn) => {
          started.push(k);
          await decodedGate.opened;
          turn.decoded(SMALL);
          await finish.opened;
        },
        { sizeBytes: 10, compressed: true },
      ),
    );
    await tick();
    expect(started).toEqual(['a', 'b']);
    decodedGate.open();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    finish.open();
    await Promise.all(compressed);
  });

  it('lets two compressed requests that decode large work one after the other, first in line, without waiting on each other', async () => {
    const admission = createAdmission(10, 4);
    const events: string[] = [];
    const decodedGate = gate();
    const finish = new Map(['a', 'b'].map((k) => [k, gate()]));
    const compressed = ['a', 'b'].map((k) =>
      admission.run(
        async (turn) => {
          events.push(`${k} reads`);
          await decodedGate.opened;
          await turn.decoded(LARGE);
          events.push(`${k} works`);
          await finish.get(k)!.opened;
        },
        { sizeBytes: 10, compressed: true },
      ),
    );
    const small = admission.run(async () => void events.push('small works'), { sizeBytes: SMALL });
    await tick();
    expect(events).toEqual(['a reads', 'b reads']);
    decodedGate.open();
    await tick();
    expect(events).toEqual(['a reads', 'b reads', 'b works']);
    expect(admission.unitsInUse).toBe(3);
    finish.get('b')!.open();
    await tick();
    // the one waiting for a large request's units starts before the small one that came earlier
    expect(events.slice(3)).toEqual(['a works', 'small works']);
    finish.get('a')!.open();
    await Promise.all([...compressed, small]);
    expect(admission.unitsInUse).toBe(0);
  });
});
