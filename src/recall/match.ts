/**
 * @module recall/match
 * The exact check behind the index. The index answers words exactly (a step's lexemes are
 * its words) and runs of one or two characters of an unspaced script exactly (characters
 * and adjacent pairs are lexemes too). A run of three or more characters is only narrowed by
 * the index — every adjacent pair present, not necessarily in one place — so the steps it
 * finds are checked here: the run's characters must stand together, in order, inside one
 * string of the step's recorded text.
 */
import { recordedTexts, type RecordedStep } from './recorded-text.js';
import { forEachToken, needsCheck, type Term } from './tokenize.js';

/** The terms the index cannot settle on its own. */
export function termsToCheck(terms: readonly Term[]): Extract<Term, { kind: 'run' }>[] {
  return terms.filter((t): t is Extract<Term, { kind: 'run' }> => needsCheck(t));
}

/** True when every run stands, whole and in order, somewhere in the step's recorded text. */
export function stepHasRuns(step: RecordedStep, runs: readonly Extract<Term, { kind: 'run' }>[]): boolean {
  return markRuns(recordedTexts(step), runs, new Array<boolean>(runs.length).fill(false));
}

/**
 * Marks in `found` each run that stands, whole and in order, inside one of the strings (each is
 * tokenized on its own, so a run never spans two); true once every run is found.
 */
export function markRuns(
  texts: readonly string[],
  runs: readonly Extract<Term, { kind: 'run' }>[],
  found: boolean[],
): boolean {
  let missing = found.filter((f) => !f).length;
  if (missing === 0) return true;
  for (const text of texts) {
    // partial[i]: how many leading units of runs[i] end at the previous token (several at once)
    let partial: number[][] = runs.map(() => []);
    forEachToken(text, (token) => {
      const next: number[][] = [];
      for (let i = 0; i < runs.length; i++) {
        const units = runs[i].units;
        const grown: number[] = [];
        if (!found[i] && token.seg) {
          if (token.joined) {
            for (const n of partial[i]) if (units[n] === token.text) grown.push(n + 1);
          }
          if (units[0] === token.text) grown.push(1);
          if (grown.includes(units.length)) {
            found[i] = true;
            missing--;
          }
        }
        next.push(grown);
      }
      partial = next;
      return missing > 0;
    });
    if (missing === 0) return true;
  }
  return false;
}
