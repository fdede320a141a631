/**
 * `tapedeck recall`'s text (src/cli/format-compare.ts formatRecall): the closing lines that
 * say what the answer could not cover.
 */
import { describe, expect, it } from 'vitest';
import { formatRecall } from '../../../src/cli/format-compare.js';
import type { RecalledRun } from '../../../src/recall/types.js';

const run: RecalledRun = {
  run: 'r1',
  tenant: null,
  outcome: 'success',
  outcome_source: 'derived',
  score: 2,
  last_end_ns: 1n,
  steps: 3,
  cost_usd: null,
  skeleton: ['agent:planner', 'llm:gpt-4o'],
  skeleton_truncated: false,
  truncated: false,
};

describe('formatRecall', () => {
  it('prints the runs, with no closing line when every stored step was searched', () => {
    expect(formatRecall({ runs: [run], truncated: false, unindexed_steps: 0 })).toBe(
      'r1  success  score 2  3 steps\n    agent:planner → llm:gpt-4o',
    );
  });

  it('says how many steps stored before the search were not searched, with runs or without', () => {
    const line = '(12 steps stored before this search were not indexed yet: they were not searched)';
    expect(formatRecall({ runs: [], truncated: false, unindexed_steps: 12 })).toBe(`no run holds every word\n${line}`);
    expect(
      formatRecall({ runs: [run], truncated: true, unindexed_steps: 12 })
        .split('\n')
        .slice(-2),
    ).toEqual(['(truncated: more runs matched than were read)', line]);
  });
});
