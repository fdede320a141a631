import { describe, expect, it } from 'vitest';
import { Deadline, DeadlineExceeded } from '../../../src/deadline/deadline.js';
import { longestCommonSubsequence } from '../../../src/diff/align.js';
import { signatureOf } from '../../../src/normalize/finish.js';
import { diffRuns } from '../../../src/diff/diff-runs.js';
import { syntheticTape } from '../../fixtures/diff/build.js';
import { LATER_NS, callsOnlyWeather } from '../../fixtures/diff/weather-lyon.js';

const ids = (xs: number[]) => Int32Array.from(xs);

/** LCS length by the textbook table, to check the aligner against. */
function lcsLength(a: number[], b: number[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      t[i][j] = a[i - 1] === b[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.length][b.length];
}

describe('signatures', () => {
  it('are the fingerprint without its input hash', () => {
    const [llm, tool] = callsOnlyWeather().steps;
    expect(signatureOf(llm)).toBe('llm:gpt-4o-mini-2024-07-18');
    expect(signatureOf(tool)).toBe('tool:get_weather');
    expect(signatureOf({ ...tool, fingerprint: 'tool:get_weather#' })).toBe('tool:get_weather'); // request not recorded
    expect(signatureOf({ ...tool, fingerprint: 'tool:get_weather' })).toBe('tool:get_weather');
  });
});

describe('longestCommonSubsequence', () => {
  it('finds a longest common subsequence, strictly increasing on both sides', () => {
    let seed = 42;
    const rand = (k: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 16) % k;
    };
    for (let round = 0; round < 200; round++) {
      const a = Array.from({ length: rand(30) }, () => rand(4));
      const b = Array.from({ length: rand(30) }, () => rand(4));
      const pairs = longestCommonSubsequence(ids(a), ids(b), new Deadline(60_000));
      expect(pairs.length).toBe(lcsLength(a, b));
      pairs.forEach(([i, j], k) => {
        expect(a[i]).toBe(b[j]);
        if (k > 0) {
          expect(i).toBeGreaterThan(pairs[k - 1][0]);
          expect(j).toBeGreaterThan(pairs[k - 1][1]);
        }
      });
    }
  });

  it('pairs a repeated step with its first occurrence', () => {
    expect(longestCommonSubsequence(ids([1, 2, 3]), ids([1, 2, 2, 3]), new Deadline(60_000))).toEqual([
      [0, 0],
      [1, 1],
      [2, 3],
    ]);
  });
});

describe('the deadline over two 5,000-step runs', () => {
  // share nothing: every step of one is missing from the other
  const a = syntheticTape('big-a', 5000, 'alpha_');
  const b = syntheticTape('big-b', 5000, 'beta_');
  // share every signature in another order: the alignment fills its whole 5,000 × 5,000 table
  const x = syntheticTape('mixed-a', 5000, 'tool_', 3);
  const y = syntheticTape('mixed-b', 5000, 'tool_', 3, true);

  it('completes within a generous budget: every step a delete or an insert', () => {
    const diff = diffRuns(a, b, { deadline: new Deadline(60_000), pricing: null, nowNs: LATER_NS });
    expect(diff.aligned).toHaveLength(10_000);
    expect(diff.aligned.filter((e) => e.op === 'delete')).toHaveLength(5000);
    expect(diff.aligned.filter((e) => e.op === 'insert')).toHaveLength(5000);
    expect(diff.first_divergence).toMatchObject({ a: 0, b: null, kind: 'structure' });
    expect(diff.truncated).toBe(false);
  });

  it('refuses as soon as the budget runs out, in the middle of the alignment, and does no more work', async () => {
    // A clock that runs out of budget at the 50th check: the alignment checks once per row of
    // 5,000 cells, so a refusal there means it stopped after at most ~50 of its 5,000 rows.
    let deadline!: Deadline;
    let expiredAtCheck = -1;
    deadline = new Deadline(1000, {
      now: () => {
        if (expiredAtCheck < 0 && deadline?.checks >= 50) expiredAtCheck = deadline.checks;
        return expiredAtCheck < 0 ? 0 : 2000;
      },
    });
    let error: unknown;
    try {
      diffRuns(x, y, { deadline, pricing: null, nowNs: LATER_NS });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect((error as DeadlineExceeded).stage).toBe('aligning steps');
    expect((error as DeadlineExceeded).status).toBe(400);
    // the check that saw the budget gone was the last one: nothing ran past it
    expect(deadline.checks).toBe(expiredAtCheck);
    expect(deadline.signal.aborted).toBe(true);
    const probe = deadline.checks;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deadline.checks).toBe(probe);
  });

  it('completes the full-table case within a generous budget', () => {
    const diff = diffRuns(x, y, { deadline: new Deadline(60_000), pricing: null, nowNs: LATER_NS });
    const same = diff.aligned.filter((e) => e.op === 'same').length;
    expect(same).toBeGreaterThan(3000); // x0 x1 x2 … against x2 x1 x0 …: two of every three align
    expect(diff.aligned.every((e) => e.op === 'same' || e.why === 'structure')).toBe(true);
  });

  it('refuses either pair with a real clock and a spent 1 ms budget', () => {
    for (const [p, q] of [
      [a, b],
      [x, y],
    ]) {
      const deadline = new Deadline(1);
      const started = performance.now();
      while (performance.now() - started < 2) {
        /* let the budget run out */
      }
      expect(() => diffRuns(p, q, { deadline, pricing: null, nowNs: LATER_NS })).toThrow(DeadlineExceeded);
    }
  });

  it('refuses a diff that finished after the budget ran out', () => {
    const small = callsOnlyWeather();
    const counting = new Deadline(60_000);
    diffRuns(small, small, { deadline: counting, pricing: null, nowNs: LATER_NS });
    const total = counting.checks;
    // a clock whose budget runs out just before the final check: all the work fits, the answer does not
    let deadline!: Deadline;
    deadline = new Deadline(1000, { now: () => (deadline !== undefined && deadline.checks >= total ? 5000 : 0) });
    expect(() => diffRuns(small, small, { deadline, pricing: null, nowNs: LATER_NS })).toThrow(/finishing the diff/);
  });
});
