/**
 * @module diff/classify
 * Turns an LCS alignment into classified entries (docs/api.md, GET /v1/diff).
 *
 * Aligned pair (same signature), first that applies:
 * - input    — the request digests differ. Checked first: a different prompt explains more
 *              than a different setting (when the configuration differs too, the explanation
 *              names both).
 * - config   — a model call whose configuration (`params`, compared whole) differs. Checked
 *              before decision because a different temperature or token limit is a cause in
 *              itself; the different output that follows is not the model "deciding" differently.
 * - decision — same input, different response digest.
 * - same     — nothing above. Status is not compared (errors and outcome report it).
 * A digest that was not recorded (content capture off) is null; null equals null, so two
 * steps recorded without content compare by what was recorded: signature and configuration.
 *
 * Between two aligned pairs lies an unaligned stretch: steps of a (deletes) and steps of b
 * (inserts). A model swap changes the signature, so it always lands in such a stretch: the
 * k-th model call naming a model on a's side of a stretch is paired with the k-th on b's side
 * as one `changed`/`config` entry. (No two steps in one stretch share a signature — the LCS
 * would have aligned them — so paired calls always name different models.)
 * Entries keep both sides' order: within a stretch, unpaired steps before a pair come first
 * (deletes, then inserts), then the pair.
 */
import type { Deadline } from '../deadline/deadline.js';
import type { Step } from '../normalize/step.js';
import { paramsEqual } from './compare.js';
import type { DiffOp, DiffWhy } from './types.js';

/** An aligned entry by position in the compared step arrays. */
export interface Entry {
  op: DiffOp;
  why: DiffWhy | null;
  a: number | null;
  b: number | null;
}

export function classifyAlignment(
  a: readonly Step[],
  b: readonly Step[],
  pairs: ReadonlyArray<readonly [number, number]>,
  deadline: Deadline,
): Entry[] {
  const tick = deadline.checkEvery(256, 'classifying aligned steps');
  const entries: Entry[] = [];
  let nextA = 0;
  let nextB = 0;
  for (const [i, j] of [...pairs, [a.length, b.length] as const]) {
    stretch(a, b, nextA, i, nextB, j, entries, tick);
    if (i < a.length && j < b.length) {
      tick();
      const why = classifyPair(a[i], b[j], tick);
      entries.push({ op: why === null ? 'same' : 'changed', why, a: i, b: j });
    }
    nextA = i + 1;
    nextB = j + 1;
  }
  return entries;
}

/** null when the pair is the same; otherwise why it changed. */
export function classifyPair(x: Step, y: Step, tick: () => void): DiffWhy | null {
  if (x.request_digest !== y.request_digest) return 'input';
  if (configDiffers(x, y, tick)) return 'config';
  if (x.response_digest !== y.response_digest) return 'decision';
  return null;
}

/** A model call's configuration: its model and its parameters. */
export function configDiffers(x: Step, y: Step, tick: () => void): boolean {
  return x.kind === 'llm' && (x.model !== y.model || !paramsEqual(x.params, y.params, tick));
}

function namesModel(step: Step): boolean {
  return step.kind === 'llm' && step.model !== null;
}

function stretch(
  a: readonly Step[],
  b: readonly Step[],
  fromA: number,
  toA: number,
  fromB: number,
  toB: number,
  out: Entry[],
  tick: () => void,
): void {
  const modelA: number[] = [];
  const modelB: number[] = [];
  for (let i = fromA; i < toA; i++) {
    tick();
    if (namesModel(a[i])) modelA.push(i);
  }
  for (let j = fromB; j < toB; j++) {
    tick();
    if (namesModel(b[j])) modelB.push(j);
  }
  const paired = Math.min(modelA.length, modelB.length);
  let i = fromA;
  let j = fromB;
  for (let k = 0; k <= paired; k++) {
    const stopA = k < paired ? modelA[k] : toA;
    const stopB = k < paired ? modelB[k] : toB;
    for (; i < stopA; i++) {
      tick();
      out.push({ op: 'delete', why: 'structure', a: i, b: null });
    }
    for (; j < stopB; j++) {
      tick();
      out.push({ op: 'insert', why: 'structure', a: null, b: j });
    }
    if (k < paired) {
      out.push({ op: 'changed', why: 'config', a: i, b: j });
      i++;
      j++;
    }
  }
}
