import { describe, expect, it } from 'vitest';
import { groupRuns, type RunSpan } from '../../../src/tapes/run-groups.js';

const T = 'a'.repeat(32);
const s = (spanId: string, parentSpanId: string | null, ownRun: string | null = null, parentRun: string | null = null): RunSpan =>
  ({ traceId: T, spanId, parentSpanId, ownRun, parentRun });
const runs = (spans: RunSpan[]) => {
  const g = groupRuns(spans);
  return Object.fromEntries(spans.map((x) => [x.spanId, g.runOf.get(`${T}/${x.spanId}`)]));
};

describe('groupRuns', () => {
  it('gives a span without a run its nearest ancestor\'s run, in any arrival order', () => {
    const spans = [s('root', null, 'sess-1'), s('mid', 'root'), s('leaf', 'mid')];
    const expected = { root: 'sess-1', mid: 'sess-1', leaf: 'sess-1' };
    expect(runs(spans)).toEqual(expected);
    expect(runs([...spans].reverse())).toEqual(expected);
  });

  it('falls back to trace:<trace_id> when no ancestor names a run (and for orphans)', () => {
    expect(runs([s('a', null), s('b', 'a'), s('orphan', 'missing')])).toEqual({ a: `trace:${T}`, b: `trace:${T}`, orphan: `trace:${T}` });
  });

  it('starts a child run where a span names a different run, its parent run the parent span\'s run', () => {
    const spans = [s('leaf', 'sub'), s('sub', 'root', 'child'), s('root', null, 'parent')];
    const g = groupRuns(spans);
    expect(runs(spans)).toEqual({ leaf: 'child', sub: 'child', root: 'parent' });
    expect(g.parentRunOf.get('child')).toBe('parent');
    expect(g.parentRunOf.has('parent')).toBe(false);
  });

  it('prefers an explicitly named parent run', () => {
    const g = groupRuns([s('x', null, 'child', 'named-parent')]);
    expect(g.parentRunOf.get('child')).toBe('named-parent');
  });

  it('survives a parent cycle', () => {
    expect(runs([s('a', 'b'), s('b', 'a')])).toEqual({ a: `trace:${T}`, b: `trace:${T}` });
  });
});
