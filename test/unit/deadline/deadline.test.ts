import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import {
  DEFAULT_QUERY_DEADLINE_MS,
  Deadline,
  DeadlineExceeded,
  startDeadline,
} from '../../../src/deadline/deadline.js';

function fakeClock(start = 0) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Deadline', () => {
  it('defaults to the documented --query-deadline-ms (the Config default)', () => {
    expect(DEFAULT_QUERY_DEADLINE_MS).toBe(10_000);
    const d = startDeadline(undefined, { now: fakeClock().now });
    expect(d.budgetMs).toBe(10_000);
    d.release();
  });

  it('counts down and throws DeadlineExceeded, a 400 ApiError, once spent', () => {
    const clock = fakeClock(100);
    const d = new Deadline(50, { now: clock.now });
    expect(d.remainingMs()).toBe(50);
    clock.t = 130;
    expect(d.remainingMs()).toBe(20);
    d.check('reading');
    clock.t = 150;
    expect(d.remainingMs()).toBe(0);
    expect(d.expired()).toBe(true);
    let error: unknown;
    try {
      d.check('aligning steps');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, type: 'deadline_exceeded', stage: 'aligning steps', budgetMs: 50 });
    expect((error as Error).message).toBe(
      'the request could not be answered within its 50 ms budget (--query-deadline-ms); it was stopped while aligning steps, ' +
        'rather than left running past it. Ask for less (smaller runs, fewer words) or raise --query-deadline-ms.',
    );
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBe(error);
  });

  it('checkEvery reads the clock every nth call only', () => {
    const clock = fakeClock();
    const d = new Deadline(10, { now: clock.now });
    const tick = d.checkEvery(3);
    clock.t = 11;
    tick();
    tick();
    expect(d.checks).toBe(0);
    expect(() => tick()).toThrow(DeadlineExceeded);
    expect(d.checks).toBe(1);
    expect(() => d.checkEvery(0)).toThrow(RangeError);
  });

  it('aborts its signal when the budget runs out, without anyone checking', async () => {
    const d = new Deadline(10);
    expect(d.signal.aborted).toBe(false);
    await sleep(40);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBeInstanceOf(DeadlineExceeded);
  });

  it('race answers on time even when the work ignores the signal', async () => {
    const d = new Deadline(15);
    let late = false;
    const work = sleep(200).then(() => {
      late = true;
      return 'late';
    });
    await expect(d.race(work, 'reading the runs')).rejects.toThrow(/stopped while reading the runs/);
    expect(late).toBe(false);
  });

  it("race passes a value, or the work's own error while budget remains", async () => {
    const d = new Deadline(1000);
    await expect(d.race(Promise.resolve(7))).resolves.toBe(7);
    await expect(d.race(Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    d.release();
  });

  it('release aborts the signal and stops every later check', () => {
    const d = new Deadline(60_000);
    d.check();
    d.release();
    d.release();
    expect(d.signal.aborted).toBe(true);
    expect(d.remainingMs()).toBe(0);
    expect(() => d.check('classifying')).toThrow('the request was already answered; work (classifying) stopped');
  });

  it('follows a parent signal (the client went away)', () => {
    const parent = new AbortController();
    const d = new Deadline(60_000, { signal: parent.signal });
    parent.abort();
    expect(d.signal.aborted).toBe(true);
    expect(() => d.check()).toThrow(DeadlineExceeded);
  });

  it('refuses a negative or non-finite budget', () => {
    expect(() => new Deadline(-1)).toThrow(RangeError);
    expect(() => new Deadline(Number.NaN)).toThrow(RangeError);
  });
});

describe('Deadline.race after the budget ran out', () => {
  it('refuses at once and leaves no unhandled rejection when the work fails later', async () => {
    let clock = 0;
    const deadline = new Deadline(1, { now: () => clock });
    clock = 1_000;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail!: (e: Error) => void;
      const work = new Promise<never>((_, reject) => {
        fail = reject;
      });
      expect(() => deadline.race(work, 'reading')).toThrow(/deadline|budget/i);
      fail(new Error('the read failed after the answer'));
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
