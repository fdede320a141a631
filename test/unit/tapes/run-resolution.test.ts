/**
 * The run rule in memory (src/tapes/run-resolution.ts), case by case. That it agrees with the
 * SQL reference (resolve-runs.ts) over random shapes: test/integration/tapes-run-resolution.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { resolveRunsInMemory, type RunNode, type RunOf } from '../../../src/tapes/run-resolution.js';

const T = 'a'.repeat(32);
const s = (
  spanId: string,
  parentSpanId: string | null,
  ownRun: string | null = null,
  ownParentRun: string | null = null,
): RunNode => ({ traceId: T, spanId, parentSpanId, ownRun, ownParentRun, runId: null, parentRun: null });

function resolved(spans: RunNode[]): Map<string, RunOf> {
  const out = resolveRunsInMemory(spans);
  if (out === 'ambiguous') throw new Error('ambiguous');
  return out;
}
const runs = (spans: RunNode[]) => {
  const r = resolved(spans);
  return Object.fromEntries(spans.map((x) => [x.spanId, r.get(`${T}/${x.spanId}`)!.runId]));
};

describe('resolveRunsInMemory', () => {
  it("gives a span without a run its nearest ancestor's run, in any arrival order", () => {
    const spans = [s('root', null, 'sess-1'), s('mid', 'root'), s('leaf', 'mid')];
    const expected = { root: 'sess-1', mid: 'sess-1', leaf: 'sess-1' };
    expect(runs(spans)).toEqual(expected);
    expect(runs([...spans].reverse())).toEqual(expected);
  });

  it('falls back to trace:<trace_id> when no ancestor names a run (and for orphans)', () => {
    expect(runs([s('a', null), s('b', 'a'), s('orphan', 'missing')])).toEqual({
      a: `trace:${T}`,
      b: `trace:${T}`,
      orphan: `trace:${T}`,
    });
  });

  it("starts a child run where a span names a different run; every span of it has the parent span's run as parent run", () => {
    const spans = [s('leaf', 'sub'), s('sub', 'root', 'child'), s('root', null, 'parent')];
    const r = resolved(spans);
    expect(runs(spans)).toEqual({ leaf: 'child', sub: 'child', root: 'parent' });
    expect(r.get(`${T}/leaf`)!.parentRun).toBe('parent');
    expect(r.get(`${T}/sub`)!.parentRun).toBe('parent');
    expect(r.get(`${T}/root`)!.parentRun).toBeNull();
  });

  it('prefers an explicitly named parent run', () => {
    expect(resolved([s('x', null, 'child', 'named-parent')]).get(`${T}/x`)!.parentRun).toBe('named-parent');
  });

  it('answers ambiguous where one run would get two different parent runs (SQL decides)', () => {
    expect(resolveRunsInMemory([s('x', null, 'child', 'p1'), s('y', null, 'child', 'p2')])).toBe('ambiguous');
  });

  it('survives a parent cycle', () => {
    expect(runs([s('a', 'b'), s('b', 'a')])).toEqual({ a: `trace:${T}`, b: `trace:${T}` });
  });
});
