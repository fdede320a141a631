import { describe, expect, it } from 'vitest';
import { runBatches } from '../../../src/recall/recall.js';

const runs = (...names: string[]) => names.map((run) => ({ run, score: 1, newestEndNs: 0n }));
const names = (batches: { run: string }[][]) => batches.map((b) => b.map((r) => r.run));

describe('runBatches', () => {
  it('puts runs in order into batches of at most the bound in spans', () => {
    const spans: Record<string, number> = { a: 4, b: 5, c: 2, d: 9, e: 1 };
    expect(names(runBatches(runs('a', 'b', 'c', 'd', 'e'), (r) => spans[r], 10))).toEqual([
      ['a', 'b'],
      ['c'],
      ['d', 'e'],
    ]);
  });

  it('gives a run past the bound a batch of its own, counted at the bound', () => {
    const spans: Record<string, number> = { a: 1, big: 50_000, b: 1 };
    expect(names(runBatches(runs('a', 'big', 'b'), (r) => spans[r], 20_000))).toEqual([['a'], ['big'], ['b']]);
  });

  it('makes no batch of no runs', () => {
    expect(runBatches([], () => 1, 10)).toEqual([]);
  });
});
