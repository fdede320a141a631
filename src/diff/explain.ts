/**
 * @module diff/explain
 * Where two runs parted, in plain language.
 *
 * The first divergence is the first entry, in alignment order, that is not `same` — with one
 * exception. A step's output exists only when it ends, after the steps nested inside it: an
 * agent step whose answer changed because a model call inside it was asked something else did
 * not part first; the call inside it did. So a `decision` change on a step that has a
 * divergent descendant later in the alignment (by parent span, through steps on the tape) is
 * passed over for that descendant. Input, config and structure differences exist when a step
 * starts and are never passed over.
 *
 * The explanation names both steps and their signature, says what kind of difference it is,
 * and quotes 12 hex digits of each side's digest (or the parameters that differ), never the
 * content itself.
 */
import type { Deadline } from '../deadline/deadline.js';
import type { Step } from '../normalize/step.js';
import { signatureOf } from '../normalize/finish.js';
import { configDiffers, type Entry } from './classify.js';
import { differingParams } from './compare.js';
import type { FirstDivergence } from './types.js';

const NAMES_SHOWN = 5;
const NAME_CHARS = 64;

export function firstDivergence(
  entries: readonly Entry[],
  a: readonly Step[],
  b: readonly Step[],
  deadline: Deadline,
): FirstDivergence | null {
  const tick = deadline.checkEvery(256, 'finding the first divergence');
  const passedOver = decisionsWithDivergentDescendants(entries, a, b, tick);
  for (let k = 0; k < entries.length; k++) {
    tick();
    const entry = entries[k];
    if (entry.op === 'same' || passedOver.has(k)) continue;
    return explain(entry, a, b, deadline);
  }
  return null;
}

/** Indices of decision entries that a later divergent descendant explains. */
function decisionsWithDivergentDescendants(
  entries: readonly Entry[],
  a: readonly Step[],
  b: readonly Step[],
  tick: () => void,
): Set<number> {
  const out = new Set<number>();
  if (!entries.some((e) => e.why === 'decision')) return out;
  const sideA = new Ancestry(a);
  const sideB = new Ancestry(b);
  // Ancestors precede descendants on a tape and in the alignment, so walking backwards, every
  // divergent descendant of an entry has been marked by the time the entry is reached.
  for (let k = entries.length - 1; k >= 0; k--) {
    tick();
    const e = entries[k];
    if (e.op === 'same') continue;
    if (e.why === 'decision' && (sideA.hasMarkedDescendant(e.a) || sideB.hasMarkedDescendant(e.b))) out.add(k);
    sideA.markAncestors(e.a, tick);
    sideB.markAncestors(e.b, tick);
  }
  return out;
}

class Ancestry {
  private readonly bySpan = new Map<string, number>();
  private readonly marked = new Set<number>();

  constructor(private readonly steps: readonly Step[]) {
    steps.forEach((s, i) => this.bySpan.set(`${s.trace_id}/${s.span_id}`, i));
  }

  hasMarkedDescendant(i: number | null): boolean {
    return i !== null && this.marked.has(i);
  }

  /** Marks every step above step i; stops at the first already marked (its chain is done). */
  markAncestors(i: number | null, tick: () => void): void {
    if (i === null) return;
    let step = this.steps[i];
    for (let hops = 0; hops < this.steps.length; hops++) {
      tick();
      if (step.parent_span_id === null) return;
      const parent = this.bySpan.get(`${step.trace_id}/${step.parent_span_id}`);
      if (parent === undefined || this.marked.has(parent)) return;
      this.marked.add(parent);
      step = this.steps[parent];
    }
  }
}

function explain(entry: Entry, a: readonly Step[], b: readonly Step[], deadline: Deadline): FirstDivergence {
  const x = entry.a === null ? null : a[entry.a];
  const y = entry.b === null ? null : b[entry.b];
  const kind = entry.why ?? 'structure';
  const at = { a: x === null ? null : x.index, b: y === null ? null : y.index };
  if (x === null || y === null) {
    const text =
      x !== null
        ? `step ${x.index} of a (${signatureOf(x)}) has no counterpart in b: b did not take this step`
        : `step ${(y as Step).index} of b (${signatureOf(y as Step)}) has no counterpart in a: b took a step a did not`;
    return { ...at, kind, explanation: text };
  }
  const sigX = signatureOf(x);
  const sigY = signatureOf(y);
  const both = `step ${x.index} of a and step ${y.index} of b`;
  const what = sigX === sigY ? `${both} (${sigX})` : `${both} (${sigX} in a, ${sigY} in b)`;
  switch (kind) {
    case 'input': {
      const tick = deadline.checkEvery(64, 'explaining the first divergence');
      const config = configDiffers(x, y, tick)
        ? `, and ran with a different configuration: ${configChange(x, y, tick)}`
        : '';
      return {
        ...at,
        kind,
        explanation: `${what} received different input: request ${short(x.request_digest)} in a, ${short(y.request_digest)} in b${config}`,
      };
    }
    case 'decision':
      return {
        ...at,
        kind,
        explanation: `${what} received the same input and answered differently: response ${short(x.response_digest)} in a, ${short(y.response_digest)} in b`,
      };
    default: {
      const tick = deadline.checkEvery(64, 'explaining the first divergence');
      return { ...at, kind, explanation: `${what} ran with a different configuration: ${configChange(x, y, tick)}` };
    }
  }
}

/** The model and the parameters that differ between two steps. */
function configChange(x: Step, y: Step, tick: () => void): string {
  const { total, differ } = differingParams(x.params, y.params, tick);
  const params =
    differ.length === 0
      ? total === 0
        ? 'no parameters recorded'
        : total === 1
          ? 'its one parameter is the same'
          : `all ${total} parameters are the same`
      : `${differ.length} of ${total} parameter${total === 1 ? '' : 's'} differ${differ.length === 1 ? 's' : ''} (${list(differ)})`;
  const model =
    x.model !== y.model ? `model ${x.model ?? 'not recorded'} in a, ${y.model ?? 'not recorded'} in b; ` : '';
  return `${model}${params}`;
}

function short(digest: string | null): string {
  return digest === null ? '(not recorded)' : digest.slice(0, 12);
}

function list(names: readonly string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).map((n) => (n.length > NAME_CHARS ? `${n.slice(0, NAME_CHARS)}…` : n));
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}
