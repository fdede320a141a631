/**
 * A tape does not depend on the order spans arrive in (docs/architecture.md "Runs"). Exporters send children first and the root last (a span is exported
 * when it ends); batching, retries and several processes shuffle further. For every corpus
 * capture, children-first/parents-last, reversed and shuffled deliveries give the same tapes
 * as the order the capture was received in.
 */
import { describe, expect, it } from 'vitest';
import { listCaptures, loadCapture } from '../../helpers/corpus.js';
import { tapesOf } from '../../helpers/tapes.js';
import { renderJson } from '../../../src/json/canonical.js';
import type { SpanRecord } from '../../../src/spans/span-record.js';

function depthOf(spans: readonly SpanRecord[]): Map<SpanRecord, number> {
  const byId = new Map(spans.map((s) => [`${s.traceId}/${s.spanId}`, s]));
  const depth = new Map<SpanRecord, number>();
  for (const s of spans) {
    let d = 0;
    for (let p = s.parentSpanId; p && d < 1000; d++) p = byId.get(`${s.traceId}/${p}`)?.parentSpanId ?? null;
    depth.set(s, d);
  }
  return depth;
}

/** Deterministic shuffle (mulberry32), so a failure reproduces. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let a = seed;
  const rand = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe.each(listCaptures())('$layout/$scenario', (ref) => {
  it('gives the same tapes whatever order the spans and log records arrive in', async () => {
    const c = await loadCapture(ref);
    const expected = renderJson(tapesOf(c.spans, c.logs));
    const depth = depthOf(c.spans);
    const childrenFirst = [...c.spans].sort((a, b) => (depth.get(b) as number) - (depth.get(a) as number));
    expect(renderJson(tapesOf(childrenFirst, c.logs))).toBe(expected);
    expect(renderJson(tapesOf([...c.spans].reverse(), [...c.logs]))).toBe(expected);
    for (const seed of [1, 2, 3]) {
      // Log records of one span keep their relative order: it is the message order.
      expect(renderJson(tapesOf(shuffled(c.spans, seed), c.logs))).toBe(expected);
    }
  });
});
