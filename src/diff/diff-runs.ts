/**
 * @module diff/diff-runs
 * Compares two runs' tapes (docs/architecture.md "Read side"; docs/api.md, GET /v1/diff). Pure: no I/O, no clock
 * (now is an argument), no environment.
 *
 * 1. Each side is compared up to its first `maxSteps` (5,000) steps.
 * 2. Steps are aligned by the longest common subsequence of their signatures (align.ts), so an
 *    extra or missing step shifts nothing after it.
 * 3. Each aligned pair is classified same / changed (config, input, decision), each unaligned
 *    step insert / delete (structure), and model calls in one unaligned stretch are paired as
 *    config changes (classify.ts).
 * 4. The first divergence is named and explained (explain.ts).
 * 5. Each side is summarized over all the steps read, with b − a deltas (summary.ts).
 *
 * Every stage spends the one request deadline and checks it as it goes; the result is checked
 * once more at the end, so a diff that finished after the budget ran out is refused too rather
 * than answered late. `truncated` is true when either side had more steps than were compared
 * or was itself cut at the span bound: either way the alignment did not see both whole runs,
 * and its tail may report as missing steps that the cut removed.
 */
import { internSignatures, longestCommonSubsequence } from './align.js';
import { classifyAlignment } from './classify.js';
import { firstDivergence } from './explain.js';
import { deltaOf, summarizeSide } from './summary.js';
import { DEFAULT_MAX_DIFF_STEPS, type AlignedStep, type DiffOptions, type DiffTape, type RunDiff } from './types.js';

export function diffRuns(a: DiffTape, b: DiffTape, options: DiffOptions): RunDiff {
  const { deadline, pricing, nowNs } = options;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_DIFF_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new RangeError(`maxSteps must be a whole number >= 1, got ${maxSteps}`);
  deadline.check('starting the diff');

  const stepsA = a.steps.length > maxSteps ? a.steps.slice(0, maxSteps) : a.steps;
  const stepsB = b.steps.length > maxSteps ? b.steps.slice(0, maxSteps) : b.steps;
  const sigs = internSignatures(stepsA, stepsB, deadline);
  const pairs = longestCommonSubsequence(sigs.a, sigs.b, deadline);
  const entries = classifyAlignment(stepsA, stepsB, pairs, deadline);

  const tick = deadline.checkEvery(1024, 'rendering the alignment');
  const aligned: AlignedStep[] = entries.map((e) => {
    tick();
    const x = e.a === null ? null : stepsA[e.a];
    const y = e.b === null ? null : stepsB[e.b];
    return {
      op: e.op,
      why: e.why,
      a: x === null ? null : x.index,
      b: y === null ? null : y.index,
      fingerprint_a: x === null ? null : x.fingerprint,
      fingerprint_b: y === null ? null : y.fingerprint,
    };
  });
  const first = firstDivergence(entries, stepsA, stepsB, deadline);
  const summaryA = summarizeSide(a, pricing, nowNs, deadline);
  const summaryB = summarizeSide(b, pricing, nowNs, deadline);
  const truncated = a.steps.length > maxSteps || b.steps.length > maxSteps || a.truncated || b.truncated;

  deadline.check('finishing the diff');
  return {
    a: summaryA,
    b: summaryB,
    aligned,
    first_divergence: first,
    delta: deltaOf(summaryA, summaryB),
    truncated,
  };
}
