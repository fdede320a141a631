/**
 * Dialects are asked in order and the first that matches a span reads it
 * (src/normalize/dialects/index.ts), so a dialect added later could silently take spans
 * another reads today. Over every corpus capture this holds each span's claims to what the
 * registry documents: exactly one dialect claims it, or two do and the documented precedence
 * says which reads it and why; and the dialect that reads it is the one of the library that
 * wrote it.
 */
import { describe, expect, it } from 'vitest';
import { DIALECTS } from '../../../src/normalize/dialects/index.js';
import type { LayoutName } from '../../../src/normalize/step.js';
import { listCaptures, loadCapture } from '../../helpers/corpus.js';

/** Two dialects may claim one span only where the registry's precedence says why (index.ts). */
const PRECEDENCE: Record<string, { reads: LayoutName; why: string }> = {
  'openllmetry+otel-genai': {
    reads: 'openllmetry',
    why: 'Traceloop ≥ 0.27 spans also carry gen_ai.* keys; OpenLLMetry is asked before OTel GenAI',
  },
};

/** The dialect that must read a span, by the instrumentation scope that wrote it. */
function expectedReader(scope: string): LayoutName | null {
  if (scope.startsWith('@arizeai/openinference') || scope === 'openinference-core') return 'openinference';
  if (scope.startsWith('@traceloop/')) return 'openllmetry';
  // the Anthropic SDK's own spans and the OTel GenAI instrumentation's, and the app's own
  // invoke_agent spans written in the GenAI conventions
  if (scope === 'com.anthropic.sdk.typescript' || scope === '@opentelemetry/instrumentation-openai')
    return 'otel-genai';
  if (scope === 'weather-agent') return 'otel-genai';
  return null;
}

describe('each corpus span is claimed by one dialect, or by two in the documented precedence', async () => {
  const rows: { capture: string; scope: string; claims: LayoutName[] }[] = [];
  for (const ref of listCaptures()) {
    const c = await loadCapture(ref);
    for (const span of c.spans) {
      const logs = c.logs.filter((l) => l.traceId === span.traceId && l.spanId === span.spanId);
      rows.push({
        capture: `${c.layout}/${c.scenario}`,
        scope: span.scope.name,
        claims: DIALECTS.filter((d) => d.matches(span, logs)).map((d) => d.name),
      });
    }
  }

  it('examines every capture', () => {
    expect(new Set(rows.map((r) => r.capture)).size).toBe(listCaptures().length);
    expect(rows.length).toBeGreaterThan(100);
  });

  it('finds exactly one claim, or a pair whose precedence is documented', () => {
    const undocumented = rows.filter((r) => r.claims.length !== 1 && PRECEDENCE[r.claims.join('+')] === undefined);
    expect(undocumented).toEqual([]);
    // the documented pair does occur (so the table is not stale) and its first is the reader
    const pairs = rows.filter((r) => r.claims.length === 2);
    expect(pairs.length).toBeGreaterThan(0);
    for (const r of pairs) expect(r.claims[0]).toBe(PRECEDENCE[r.claims.join('+')].reads);
  });

  it('has each span read by the dialect of the library that wrote it', () => {
    const misread = rows.filter((r) => r.claims[0] !== expectedReader(r.scope));
    expect(misread).toEqual([]);
  });
});
