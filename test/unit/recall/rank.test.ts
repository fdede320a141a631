import { describe, expect, it } from 'vitest';
import type { Step, StepKind, StepStatus, Tape } from '../../../src/normalize/step.js';
import { causeOf, foldSkeleton, groupMatches, keepOutcome, rankRuns, recallEntry } from '../../../src/recall/rank.js';
import type { RecalledRun } from '../../../src/recall/types.js';

const NOW = 1_800_000_000_000_000_000n;
const HOUR = 3_600_000_000_000n;

function step(
  index: number,
  kind: StepKind,
  name: string,
  status: StepStatus = 'ok',
  parent: string | null = 'root',
): Step {
  return {
    index,
    kind,
    name,
    model: kind === 'llm' ? name : null,
    tool: kind === 'tool' ? name : null,
    service: null,
    trace_id: 'a'.repeat(32),
    span_id: index.toString(16).padStart(16, '0'),
    parent_span_id: parent,
    start_ns: NOW - HOUR + BigInt(index) * 1000n,
    duration_ns: 500n,
    status,
    request: null,
    response: null,
    request_digest: null,
    response_digest: null,
    fingerprint: `${kind}:${name}#`,
    tokens: { input: null, output: null, cache_read: null, cache_write: null, context: null },
    params: {},
    layout: 'otel-genai',
    cost_usd: null,
  };
}

function entry(run: string, outcome: RecalledRun['outcome'], score: number, lastEnd: bigint): RecalledRun {
  return {
    run,
    tenant: null,
    outcome,
    outcome_source: 'derived',
    score,
    last_end_ns: lastEnd,
    steps: 1,
    cost_usd: 0,
    skeleton: [],
    skeleton_truncated: false,
    truncated: false,
  };
}

describe('groupMatches', () => {
  it('counts matches per run and keeps the runs with the most, ties to the newest match', () => {
    const matches = [
      { run: 'a', end_ns: 5n },
      { run: 'b', end_ns: 9n },
      { run: 'a', end_ns: 7n },
      { run: 'c', end_ns: 8n },
      { run: 'd', end_ns: 1n },
    ];
    expect(groupMatches(matches, 3)).toEqual({
      runs: [
        { run: 'a', score: 2, newestEndNs: 7n },
        { run: 'b', score: 1, newestEndNs: 9n },
        { run: 'c', score: 1, newestEndNs: 8n },
      ],
      overflow: true,
    });
    expect(groupMatches(matches, 4).overflow).toBe(false);
  });
});

describe('foldSkeleton', () => {
  it('folds consecutive repeats as "xN"', () => {
    expect(foldSkeleton(['llm:gpt', 'tool:search', 'tool:search', 'tool:search', 'llm:gpt', 'llm:gpt'], 40)).toEqual({
      skeleton: ['llm:gpt', 'tool:search x3', 'llm:gpt x2'],
      truncated: false,
    });
  });

  it('keeps at most the bound of entries and says it was cut', () => {
    const sigs = Array.from({ length: 50 }, (_, i) => `tool:t${i % 2}`);
    expect(foldSkeleton(sigs, 40)).toEqual({ skeleton: sigs.slice(0, 40), truncated: true });
    expect(foldSkeleton(sigs.slice(0, 40), 40).truncated).toBe(false);
    expect(foldSkeleton([...sigs.slice(0, 39), 'x', 'x', 'x'], 40)).toEqual({
      skeleton: [...sigs.slice(0, 39), 'x x3'],
      truncated: false,
    });
  });
});

describe('causeOf', () => {
  it('names the last step that errored: the innermost, latest error', () => {
    const steps = [
      step(0, 'agent', 'planner', 'error', null),
      step(1, 'llm', 'gpt'),
      step(2, 'tool', 'book', 'error'),
      step(3, 'llm', 'gpt'),
    ];
    expect(causeOf(steps)).toEqual({ index: 2, signature: 'tool:book', span_id: steps[2].span_id, status: 'error' });
  });

  it('names the step that ended last when only a context span failed', () => {
    expect(causeOf([step(0, 'llm', 'gpt'), step(1, 'tool', 'x')])).toMatchObject({
      index: 1,
      signature: 'tool:x',
      status: 'ok',
    });
    expect(causeOf([])).toBeNull();
  });
});

describe('recallEntry', () => {
  const tape: Tape = {
    run: 'r',
    tenant: null,
    spans_examined: 4,
    truncated: false,
    steps: [step(0, 'llm', 'gpt'), step(1, 'tool', 's', 'error'), step(2, 'tool', 's'), step(3, 'llm', 'gpt')],
  };
  const matches = { run: 'r', score: 2, newestEndNs: NOW - HOUR };

  it('gives a failed run its cause, and folds its skeleton', () => {
    const e = recallEntry(
      tape,
      matches,
      { lastEndNs: NOW - HOUR, failed: true },
      { pricing: null, nowNs: NOW, maxSkeletonEntries: 40 },
    );
    expect(e).toMatchObject({
      outcome: 'failure',
      score: 2,
      steps: 4,
      skeleton: ['llm:gpt', 'tool:s x2', 'llm:gpt'],
      cause: { index: 1 },
      cost_usd: null,
    });
  });

  it('gives a cut run an unknown outcome and no cause, even when its spans failed', () => {
    const e = recallEntry(
      { ...tape, truncated: true },
      matches,
      { lastEndNs: NOW - HOUR, failed: true },
      { pricing: null, nowNs: NOW, maxSkeletonEntries: 40 },
    );
    expect(e.outcome).toBe('unknown');
    expect(e.truncated).toBe(true);
    expect('cause' in e).toBe(false);
  });
});

describe('rankRuns', () => {
  it('ranks successes first, then more matches, then the most recent', () => {
    const ranked = rankRuns([
      entry('fail-many', 'failure', 9, 10n),
      entry('ok-few-old', 'success', 1, 1n),
      entry('unknown', 'unknown', 5, 99n),
      entry('ok-few-new', 'success', 1, 2n),
      entry('ok-many', 'success', 3, 0n),
    ]);
    expect(ranked.map((r) => r.run)).toEqual(['ok-many', 'ok-few-new', 'ok-few-old', 'fail-many', 'unknown']);
    expect(keepOutcome(ranked, 'failure').map((r) => r.run)).toEqual(['fail-many']);
    expect(keepOutcome(ranked, 'success')).toHaveLength(3);
    expect(keepOutcome(ranked, 'any')).toHaveLength(5);
  });
});
