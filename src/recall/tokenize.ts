/**
 * @module recall/tokenize
 * Words for recall (docs/architecture.md "Recall's index"), found here rather than by
 * PostgreSQL's text search, whose parser depends on the server's locale and does not segment
 * Chinese: the same words on PGlite and on any server, for text in any language; the query
 * is built from the same words. A word is a run of letters, marks and digits after NFKC, lower
 * case and a few script folds; in unspaced scripts each character is a token and adjacent
 * pairs are indexed too, so a longer term is narrowed by the index and checked in order
 * (match.ts). indexWords runs on every step at ingest, so all-ASCII text (most of what agents
 * record) takes a short cut with the same output, which the tests hold to the plain
 * implementation in test/unit/recall/tokenize-reference.ts.
 */

import { Added, ASCII_WORDS_MAX, copyAscii, createAsciiWords, type AsciiWords } from './ascii-words.js';

/** A WebAssembly table whose memory grew past this (a text of megabytes) is not reused. */
const ASCII_WORDS_KEPT_BYTES = 16 * 1024 * 1024;
import { ASCII_WORD_LOWER, scanTokens } from './scan.js';
import { HI_OFFSET, HI_PRIME, LO_OFFSET, LO_PRIME, WordTable } from './word-hash.js';

export interface Token {
  text: string;
  /** a character of a script written without spaces */
  seg: boolean;
  /** seg and directly after another seg character (no space or punctuation between) */
  joined: boolean;
}

/** Longest word indexed, in UTF-16 code units. */
export const MAX_TOKEN_CHARS = 100;
/** Distinct words stored per step. */
export const MAX_STEP_WORDS = 65_536;

const ARABIC_MARKS = /[\u0640\u064B-\u065F\u0670]/g;
/** what "İ" lower-cases to: i with a combining dot above */
const DOTTED_I = /i\u0307/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII range, written as code points
const HAS_UPPER_OR_SPECIAL = /[^\u0000-\u0040\u005b-\u007f]/;

/** The normal form both sides of a match are compared in. */
export function normalizeText(text: string): string {
  // ASCII without capitals (most of what agents record) needs no work.
  if (!HAS_UPPER_OR_SPECIAL.test(text)) return text;
  return text.normalize('NFKC').toLowerCase().replace(/ς/g, 'σ').replace(DOTTED_I, 'i').replace(ARABIC_MARKS, '');
}

/**
 * Calls fn with each token of text, in order; stops early when fn returns false. The first
 * token of each call is never joined: separate strings are separate text.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: callbacks that return nothing go on
export function forEachToken(text: string, fn: (token: Token) => boolean | void): void {
  const s = normalizeText(text);
  scanTokens(s, (start, end, seg, joined) => fn({ text: s.slice(start, end), seg, joined }));
}

/** Every token of text, in order. */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  forEachToken(text, (t) => {
    out.push(t);
  });
  return out;
}

/**
 * The words stored for a step whose recorded text is `texts`: each distinct lexeme's hash
 * (word-hash.ts) in first-use order, as lanes (hi, lo, hi, lo, ...), at most maxWords of them
 * (past the cap, later words of the step are not findable).
 */
export function indexWords(texts: Iterable<string>, maxWords = MAX_STEP_WORDS): Int32Array {
  // The tables are reused from call to call; a call made while one runs (texts a generator
  // that indexes) makes its own, in JavaScript.
  const words = spareWords ?? new WordTable(true);
  spareWords = undefined;
  // While the texts are ASCII, their words go to the WebAssembly table (ascii-words.ts).
  let ascii: AsciiWords | null = null;
  if (maxWords >= 0 && maxWords <= ASCII_WORDS_MAX) {
    ascii = spareAscii;
    spareAscii = null;
  }
  ascii?.reset();
  try {
    for (const text of texts) {
      if (ascii) {
        let added = ascii.add(text, maxWords);
        if (added === Added.NotAscii) added = addMixed(ascii, text, maxWords);
        if (added === Added.Full) break;
        if (added === Added.Done) continue;
        // Mostly not ASCII: the JavaScript table takes the step from here, with the words so far.
        ascii.moveTo(words);
        spareAscii = ascii;
        ascii = null;
      }
      const bytes = asciiBytes(text);
      if (
        !(bytes !== null
          ? addAscii(words, text.length, bytes, maxWords)
          : addText(normalizeText(text), tableAdder(words, maxWords)))
      )
        break;
    }
    return ascii ? ascii.lanes(maxWords) : words.lanes(maxWords);
  } finally {
    words.clear();
    spareWords = words;
    // Its memory only grows: one that took a very long text is dropped for a new one.
    if (ascii) spareAscii = ascii.memoryBytes > ASCII_WORDS_KEPT_BYTES ? createAsciiWords() : ascii;
  }
}

/**
 * Adds the words of a text that is not all ASCII to the WebAssembly table: its long stretches
 * of ASCII as ASCII text (scan), the rest by the general path (normalizeText, scanTokens), word
 * by word. A real prompt is mostly ASCII with a curly quote or an accented name here and there,
 * and the general path is many times slower per byte than scan. A text that is mostly not
 * ASCII (French prose, Russian, Chinese) is left to the JavaScript table (NotAscii, nothing
 * added): its words one call at a time into the module would cost more than they do there.
 *
 * The text is cut only before an ASCII character that follows an ASCII character that is not
 * a word character (a space, punctuation): no word or joined pair spans such a cut, and NFKC
 * never joins an ASCII character to what precedes it, nor does lower-casing depend on it
 * (the final sigma is folded to σ anyway), so the parts give the words the whole would.
 */
function addMixed(ascii: AsciiWords, text: string, maxWords: number): Added {
  const general = generalStretches(text);
  if (general === null) return Added.NotAscii;
  let pos = 0;
  for (let i = 0; i < general.length; i += 2) {
    const start = general[i];
    const end = general[i + 1];
    if (start > pos && ascii.add(text.slice(pos, start), maxWords) === Added.Full) return Added.Full;
    if (!addText(normalizeText(text.slice(start, end)), (s, a, b) => !ascii.addUnits(s, a, b, maxWords)))
      return Added.Full;
    pos = end;
  }
  return pos < text.length ? ascii.add(text.slice(pos), maxWords) : Added.Done;
}

/** Shorter stretches of ASCII between characters that are not go to the general path with them. */
const MIN_ASCII_STRETCH = 256;

/**
 * The parts of text for the general path (addMixed), as [start, end) pairs in order, each
 * from the last cut before a character that is not ASCII to the first cut after it that
 * MIN_ASCII_STRETCH characters of ASCII follow; null when they are most of the text.
 */
function generalStretches(text: string): number[] | null {
  const n = text.length;
  const out: number[] = [];
  let covered = 0;
  let pos = 0;
  for (let first = nonAsciiFrom(text, 0); first >= 0; first = nonAsciiFrom(text, pos)) {
    let start = first - 1;
    while (start > pos && !isCut(text, start)) start--;
    if (start < pos) start = pos;
    // past this end, the parts would be more than half the text
    const most = start + (n >> 1) - covered;
    let end = first + 1;
    for (;;) {
      while (end < n && !isCut(text, end)) if (++end > most) return null;
      const next = nonAsciiFrom(text, end);
      if (next < 0 || next - end >= MIN_ASCII_STRETCH) break;
      end = next + 1;
    }
    out.push(start, end);
    covered += end - start;
    pos = end;
  }
  return covered * 2 > n ? null : out;
}

/** The index of the first character of text from `from` on that is not ASCII; -1: none. */
function nonAsciiFrom(text: string, from: number): number {
  NON_ASCII_FROM.lastIndex = from;
  return NON_ASCII_FROM.exec(text)?.index ?? -1;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII range, written as code points
const NON_ASCII_FROM = /[^\u0000-\u007f]/g;

/** Whether text may be cut before position i (addMixed): an ASCII character after an ASCII non-word character. */
function isCut(text: string, i: number): boolean {
  const before = text.charCodeAt(i - 1);
  return text.charCodeAt(i) <= 0x7f && before <= 0x7f && ASCII_WORD_LOWER[before] === 0;
}

/** addText's `add` for a WordTable: false once maxWords words are there. */
function tableAdder(words: WordTable, maxWords: number): (s: string, start: number, end: number) => boolean {
  return (s, start, end) => !(words.addUnits(s, start, end) < 0 && words.size >= maxWords);
}

/**
 * Adds the words of an all-ASCII text of n characters whose bytes are b; false once maxWords
 * are there (or, for a cap of 0, one: indexWords keeps the first maxWords). A word's lexeme
 * is its lower case: its units are its bytes through the table.
 */
function addAscii(words: WordTable, n: number, b: Uint8Array, maxWords: number): boolean {
  const lower = ASCII_WORD_LOWER;
  let start = 0;
  while (start < n) {
    let c = lower[b[start]];
    if (c === 0) {
      start++;
      continue;
    }
    let hi = Math.imul(HI_OFFSET ^ c, HI_PRIME);
    let lo = Math.imul(LO_OFFSET ^ c, LO_PRIME);
    let end = start + 1;
    for (; end < n; end++) {
      c = lower[b[end]];
      if (c === 0) break;
      hi = Math.imul(hi ^ c, HI_PRIME);
      lo = Math.imul(lo ^ c, LO_PRIME);
    }
    if (end - start <= MAX_TOKEN_CHARS && words.add(hi, lo) < 0 && words.size >= maxWords) return false;
    start = end + 1; // b[end] ended the word: no word starts there
  }
  return true;
}

/**
 * Adds the words, characters and pairs of s (normalized) with `add`, which takes a lexeme's
 * units s[start, end) and answers false once maxWords words are there; false then.
 */
function addText(s: string, add: (s: string, start: number, end: number) => boolean): boolean {
  let prevStart = -1;
  let full = false;
  scanTokens(s, (start, end, seg, joined) => {
    if (end - start > MAX_TOKEN_CHARS) {
      prevStart = -1; // a character buried in marks is no pair's half either
      return true;
    }
    if (!add(s, start, end)) {
      full = true;
      return false;
    }
    if (!seg) return true;
    if (joined && prevStart >= 0 && !add(s, prevStart, end)) {
      full = true;
      return false;
    }
    prevStart = start;
    return true;
  });
  return !full;
}

/** Holds the bytes of each text up to its size; a longer one gets a buffer of its own. */
const scratch = new Uint8Array(64 * 1024);
// biome-ignore lint/suspicious/noControlCharactersInRegex: an ASCII range, written as code points
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * The bytes of text, one per character, when it is all ASCII, in a buffer reused from call
 * to call (ascii-words.ts copyAscii); else null.
 */
function asciiBytes(text: string): Uint8Array | null {
  let into = scratch;
  if (text.length > scratch.length) {
    if (NON_ASCII.test(text)) return null;
    into = new Uint8Array(text.length);
  }
  return copyAscii(text, into, 0) ? into : null;
}

let spareWords: WordTable | undefined = new WordTable(true);
let spareAscii: AsciiWords | null = createAsciiWords();

/** One term of a query: a word, or a run of joined characters of a segmented script. */
export type Term = { kind: 'word'; text: string } | { kind: 'run'; text: string; units: string[] };

/** The distinct terms of a query, in the order written. */
export function queryTerms(query: string): Term[] {
  const terms: Term[] = [];
  let run: string[] = [];
  const flush = (): void => {
    if (run.length > 0) terms.push({ kind: 'run', text: run.join(''), units: run });
    run = [];
  };
  forEachToken(query, (t) => {
    if (!t.seg) {
      flush();
      terms.push({ kind: 'word', text: t.text });
      return;
    }
    if (!t.joined) flush();
    run.push(t.text);
  });
  flush();
  const seen = new Set<string>();
  return terms.filter((t) => {
    if (seen.has(t.text)) return false;
    seen.add(t.text);
    return true;
  });
}

/** The index lexemes a term needs: the word, the character, or every adjacent pair. */
export function termLexemes(term: Term): string[] {
  if (term.kind === 'word') return [term.text];
  if (term.units.length === 1) return [term.units[0]];
  const pairs: string[] = [];
  for (let i = 1; i < term.units.length; i++) pairs.push(term.units[i - 1] + term.units[i]);
  return pairs;
}

/** True when the index alone cannot tell: a run of three characters or more. */
export function needsCheck(term: Term): boolean {
  return term.kind === 'run' && term.units.length > 2;
}
