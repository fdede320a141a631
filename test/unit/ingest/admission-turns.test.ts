/**
 * Of the requests admitted (src/ingest/admission.ts), only as many as the work units allow
 * work at once: a request takes one unit, or two when it is large or says no size. The others
 * wait their turn in arrival order without being refused, and a turn passes on however the
 * work ends.
 */
import { describe, expect, it } from 'vitest';
import {
  createAdmission,
  DEFAULT_WORK_UNITS,
  LARGE_REQUEST_BYTES,
  workUnitsOf,
} from '../../../src/ingest/admission.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
const tick = () => new Promise((r) => setTimeout(r, 5));
const SMALL = 1024;
const LARGE = LARGE_REQUEST_BYTES + 1;

describe('admission turns', () => {
  it('lets requests work while units are free and the others wait, in arrival order', async () => {
    const admission = createAdmission(10, 2);
    const started: string[] = [];
    const gates = new Map(['a', 'b', 'c', 'd'].map((k) => [k, gate()]));
    const runs = [...gates].map(([k, g]) =>
      admission.run(async () => {
        started.push(k);
        await g.opened;
        return k;
      }, SMALL),
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

  it('gives a large request, or one of unknown size, two units, and lets no small one overtake it', async () => {
    expect([workUnitsOf(SMALL), workUnitsOf(LARGE_REQUEST_BYTES), workUnitsOf(LARGE), workUnitsOf(undefined)]).toEqual([
      1, 1, 2, 2,
    ]);
    const admission = createAdmission(10, 3);
    const started: string[] = [];
    const gates = new Map(['small', 'large', 'later'].map((k) => [k, gate()]));
    const sizes: Record<string, number> = { small: SMALL, large: LARGE, later: SMALL };
    const runs = [...gates].map(([k, g]) =>
      admission.run(async () => {
        started.push(k);
        await g.opened;
      }, sizes[k]),
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
    expect(await admission.run(async () => 'ran', LARGE)).toBe('ran');
  });

  it('counts waiting requests against the in-flight limit', async () => {
    const admission = createAdmission(2, 1);
    const g = gate();
    const first = admission.run(() => g.opened, SMALL);
    const second = admission.run(async () => 'second', SMALL);
    await expect(admission.run(async () => 'third', SMALL)).rejects.toMatchObject({ kind: 'busy' });
    g.open();
    await first;
    expect(await second).toBe('second');
  });

  it('passes the turn on when the work fails', async () => {
    const admission = createAdmission(4, 1);
    const failed = admission.run(async () => {
      throw new Error('write failed');
    }, SMALL);
    const next = admission.run(async () => 'next', SMALL);
    await expect(failed).rejects.toThrow('write failed');
    expect(await next).toBe('next');
    expect(await admission.run(async () => 'after', SMALL)).toBe('after');
  });

  it('works on four small requests, two large ones, or one large and two small, at once by default', async () => {
    expect(DEFAULT_WORK_UNITS).toBe(4);
    for (const [sizes, first] of [
      [[SMALL, SMALL, SMALL, SMALL, SMALL], 4],
      [[LARGE, LARGE, SMALL], 2],
      [[LARGE, SMALL, SMALL, LARGE, SMALL], 3],
    ] as const) {
      const admission = createAdmission(10);
      const started: number[] = [];
      const g = gate();
      const runs = sizes.map((size, i) =>
        admission.run(async () => {
          started.push(i);
          await g.opened;
        }, size),
      );
      await tick();
      expect(started).toEqual(sizes.slice(0, first).map((_, i) => i));
      g.open();
      await Promise.all(runs);
      expect(started).toEqual(sizes.map((_, i) => i));
    }
  });
});
