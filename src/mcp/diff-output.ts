/**
 * @module mcp/diff-output
 * compare_runs' structured content: GET /v1/diff's answer (diff/types.ts RunDiff) and its
 * output schema. Structured content travels as plain JSON, so its nanosecond durations are
 * numbers (exact below 2^53 ns, about 104 days; longer ones are rounded).
 */
import { z } from 'zod';
import type { RunDiff } from '../diff/types.js';

const why = z.enum(['input', 'decision', 'config', 'structure']);
const side = z.object({
  run: z.string(),
  steps: z.number(),
  cost_usd: z.number().nullable(),
  tokens: z.number().nullable(),
  duration_ns: z.number().nullable(),
  errors: z.number(),
  outcome: z.string(),
  truncated: z.boolean(),
});

export const diffOutputShape = {
  a: side,
  b: side,
  aligned: z.array(
    z.object({
      op: z.enum(['same', 'changed', 'insert', 'delete']),
      why: why.nullable(),
      a: z.number().nullable(),
      b: z.number().nullable(),
      fingerprint_a: z.string().nullable(),
      fingerprint_b: z.string().nullable(),
    }),
  ),
  first_divergence: z
    .object({ a: z.number().nullable(), b: z.number().nullable(), kind: why, explanation: z.string() })
    .nullable(),
  delta: z.object({
    cost_usd: z.number().nullable(),
    tokens: z.number().nullable(),
    duration_ns: z.number().nullable(),
    errors: z.number(),
    steps: z.number(),
  }),
  truncated: z.boolean(),
};

const durationOf = (ns: bigint | null) => (ns === null ? null : Number(ns));

export function structuredDiff(diff: RunDiff): Record<string, unknown> {
  return {
    ...diff,
    a: { ...diff.a, duration_ns: durationOf(diff.a.duration_ns) },
    b: { ...diff.b, duration_ns: durationOf(diff.b.duration_ns) },
    delta: { ...diff.delta, duration_ns: durationOf(diff.delta.duration_ns) },
  };
}
