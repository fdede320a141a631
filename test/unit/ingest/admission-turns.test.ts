/**
 * Of the requests admitted (src/ingest/admission.ts), at most maxWorking work at once; the
 * others wait their turn in arrival order without being refused, and a turn passes on
 * however the work ends.
 */
import { describe, expect, it } from 'vitest';
import { createAdmission, DEFAULT_MAX_WORKING } from '../../../src/ingest/admission.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('admission turns', () => {
  it('lets maxWorking requests work at once and the others wait, in arrival order', async () => {
    const admission = createAdmission(10, 2);
    const started: string[] = [];
    const gates = new Map(['a', 'b', 'c', 'd'].map((k) => [k, gate()]));
    const runs = [...gates].map(([k, g]) => admission.run(async () => { started.push(k); await g.opened; return k; }));
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

  it('counts waiting requests against the in-flight limit', async () => {
    const admission = createAdmission(2, 1);
    const g = gate();
    const first = admission.run(() => g.opened);
    const second = admission.run(async () => 'second');
    await expect(admission.run(async () => 'third')).rejects.toMatchObject({ kind: 'busy' });
    g.open();
    await first;
    expect(await second).toBe('second');
  });

  it('passes the turn on when the work fails', async () => {
    const admission = createAdmission(4, 1);
    const failed = admission.run(async () => { throw new Error('write failed'); });
    const next = admission.run(async () => 'next');
    await expect(failed).rejects.toThrow('write failed');
    expect(await next).toBe('next');
    expect(await admission.run(async () => 'after')).toBe('after');
  });

  it('works on two requests at once by default', () => {
    expect(DEFAULT_MAX_WORKING).toBe(2);
  });
});
