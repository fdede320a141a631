/**
 * @module diff/align
 * Longest common subsequence over step signatures.
 *
 * A signature is `kind:name` — the fingerprint without its input hash — so two steps align
 * when they are the same kind of call to the same model or tool, whatever they were asked.
 * Signatures are interned as small integers first, so the quadratic part compares integers,
 * however long the names inside them.
 *
 * The alignment trims the common prefix and suffix (runs that share most of their steps cost
 * almost nothing), sets aside steps whose signature never occurs on the other side (they can
 * be in no common subsequence; two runs that share nothing cost linear time), then fills the
 * classic LCS table over what is left, row by row with two
 * Int32Array rows, keeping one bit per cell (came from above or from the left; a diagonal is
 * implied by equal signatures) for the traceback: 5,000 × 5,000 steps is 25M cells and about
 * 3 MiB of bits. The deadline is checked once per row (at most 5,000 cells between checks),
 * so the fill stops within microseconds of the budget running out.
 */
import type { Deadline } from '../deadline/deadline.js';
import { signatureOf } from '../normalize/finish.js';
import type { Step } from '../normalize/step.js';

/** Interns the signatures of both sides into one id space. */
export function internSignatures(
  a: readonly Step[],
  b: readonly Step[],
  deadline: Deadline,
): { a: Int32Array; b: Int32Array; names: string[] } {
  const ids = new Map<string, number>();
  const names: string[] = [];
  const tick = deadline.checkEvery(1024, 'reading step signatures');
  const intern = (steps: readonly Step[]): Int32Array => {
    const out = new Int32Array(steps.length);
    for (let i = 0; i < steps.length; i++) {
      tick();
      const sig = signatureOf(steps[i]);
      let id = ids.get(sig);
      if (id === undefined) {
        id = names.length;
        ids.set(sig, id);
        names.push(sig);
      }
      out[i] = id;
    }
    return out;
  };
  return { a: intern(a), b: intern(b), names };
}

/**
 * The matched index pairs of one longest common subsequence, ascending on both sides.
 * Ties prefer the earliest match (a step repeated in b pairs with its first occurrence).
 */
export function longestCommonSubsequence(a: Int32Array, b: Int32Array, deadline: Deadline): Array<[number, number]> {
  const stage = 'aligning steps';
  deadline.check(stage);
  const n = a.length;
  const m = b.length;
  let prefix = 0;
  while (prefix < n && prefix < m && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && a[n - 1 - suffix] === b[m - 1 - suffix]) suffix++;

  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < prefix; i++) pairs.push([i, i]);
  if (n - prefix - suffix > 0 && m - prefix - suffix > 0) {
    const rows = sharedOnly(a, prefix, n - suffix, b, prefix, m - suffix, deadline, stage);
    const cols = sharedOnly(b, prefix, m - suffix, a, prefix, n - suffix, deadline, stage);
    if (rows.ids.length > 0 && cols.ids.length > 0) {
      for (const [i, j] of middle(rows.ids, cols.ids, deadline, stage)) pairs.push([rows.at[i], cols.at[j]]);
    }
  }
  for (let k = suffix; k > 0; k--) pairs.push([n - k, m - k]);
  return pairs;
}

/** The ids of xs[from, to) that also occur in ys[yFrom, yTo), with their positions in xs. */
function sharedOnly(
  xs: Int32Array,
  from: number,
  to: number,
  ys: Int32Array,
  yFrom: number,
  yTo: number,
  deadline: Deadline,
  stage: string,
): { ids: Int32Array; at: Int32Array } {
  const tick = deadline.checkEvery(4096, stage);
  const present = new Set<number>();
  for (let j = yFrom; j < yTo; j++) {
    tick();
    present.add(ys[j]);
  }
  const ids: number[] = [];
  const at: number[] = [];
  for (let i = from; i < to; i++) {
    tick();
    if (present.has(xs[i])) {
      ids.push(xs[i]);
      at.push(i);
    }
  }
  return { ids: Int32Array.from(ids), at: Int32Array.from(at) };
}

/**
 * The LCS table over the untrimmed, shared middle. Rows run backwards (suffix lengths) so that the
 * traceback walks forwards and, on ties, takes the earliest match.
 */
function middle(a: Int32Array, b: Int32Array, deadline: Deadline, stage: string): Array<[number, number]> {
  const rows = a.length;
  const cols = b.length;
  // bit (i, j) set: L[i][j] came from L[i+1][j] (skip a[i]); clear: from L[i][j+1] (skip b[j])
  const skipA = new Uint8Array(Math.ceil((rows * cols) / 8));
  let below = new Int32Array(cols + 1); // L[i+1][*]
  let here = new Int32Array(cols + 1); // L[i][*]
  for (let i = rows - 1; i >= 0; i--) {
    deadline.check(stage);
    const ai = a[i];
    const rowBase = i * cols;
    here[cols] = 0;
    for (let j = cols - 1; j >= 0; j--) {
      if (ai === b[j]) {
        here[j] = below[j + 1] + 1;
      } else {
        const down = below[j];
        const right = here[j + 1];
        if (down >= right) {
          here[j] = down;
          const bit = rowBase + j;
          skipA[bit >> 3] |= 1 << (bit & 7);
        } else {
          here[j] = right;
        }
      }
    }
    const swap = below;
    below = here;
    here = swap;
  }

  const pairs: Array<[number, number]> = [];
  const tick = deadline.checkEvery(4096, stage);
  let i = 0;
  let j = 0;
  while (i < rows && j < cols) {
    tick();
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else {
      const bit = i * cols + j;
      if (skipA[bit >> 3] & (1 << (bit & 7))) i++;
      else j++;
    }
  }
  return pairs;
}
