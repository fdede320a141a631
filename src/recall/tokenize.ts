/**
 * @module recall/tokenize
 * Words for recall (seed 004, "Recall"), the same on PGlite and on any PostgreSQL server
 * whatever its locale, for text in any language. PostgreSQL's text-search parser depends on
 * the server's locale (in the C locale it drops non-ASCII letters) and does not segment
 * Chinese, so words are found here, in JS, and stored as lexemes as they are
 * (`array_to_tsvector`, which bypasses the parser); the query is built from the same words.
 *
 * Normalisation: NFKC (full-width forms, ligatures, Arabic presentation forms fold to their
 * plain letters), lower case (Unicode-aware; Turkish İ as i), Greek final sigma as σ, and
 * Arabic short-vowel marks (harakat) and tatweel removed, since Arabic is usually written
 * without them.
 *
 * Tokens:
 * - a word is a run of letters, marks and digits (\p{L}\p{M}\p{N}): Latin, Cyrillic, Arabic,
 *   Hebrew, Devanagari... `get_weather` is two words, `gpt-4o` is `gpt` and `4o`;
 * - in scripts written without spaces between words (Han, Hiragana, Katakana, Hangul, Thai,
 *   Lao, Khmer, Myanmar) each character (with its combining marks) is a token of its own,
 *   marked `joined` when it follows another such character with nothing in between. A query
 *   term in those scripts is a run of joined characters and matches where the same characters
 *   stand together, inside a longer run or not: 天气 matches 今天天气很好.
 *
 * Index lexemes: every word; every segmented character; and every joined pair of them (a
 * bigram), so a one- or two-character term is matched exactly by the index alone, and a
 * longer one is narrowed to the steps holding all its pairs, then checked in order (match.ts).
 * Tokens longer than MAX_TOKEN_CHARS (hashes of hashes, base64, a character buried under
 * hundreds of combining marks) are not indexed, so no lexeme nears PostgreSQL's 2,046-byte
 * limit; and a step's lexemes are capped at MAX_INDEX_BYTES in the order the text first uses
 * them (a tsvector holds at most 1 MB): past the cap, later words of that step are not
 * findable.
 */

import { scanTokens } from './scan.js';

export interface Token {
  text: string;
  /** a character of a script written without spaces */
  seg: boolean;
  /** seg and directly after another seg character (no space or punctuation between) */
  joined: boolean;
}

/** Longest word indexed, in UTF-16 code units. */
export const MAX_TOKEN_CHARS = 100;
/** Lexeme bytes (UTF-8, plus 4 per lexeme of tsvector overhead) stored per step. */
export const MAX_INDEX_BYTES = 512 * 1024;

const ARABIC_MARKS = /[\u0640\u064B-\u065F\u0670]/g;
/** what "İ" lower-cases to: i with a combining dot above */
const DOTTED_I = /i\u0307/g;
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
export function forEachToken(text: string, fn: (token: Token) => boolean | void): void {
  const s = normalizeText(text);
  scanTokens(s, (start, end, seg, joined) => fn({ text: s.slice(start, end), seg, joined }));
}

/** Every token of text, in order. */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  forEachToken(text, (t) => { out.push(t); });
  return out;
}

/** The lexemes stored for a step whose recorded text is `texts`, capped at maxBytes. */
export function indexLexemes(texts: Iterable<string>, maxBytes = MAX_INDEX_BYTES): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  // Characters and pairs of one UTF-16 unit each (nearly all of CJK) are deduplicated by
  // number, without building a string for each occurrence.
  const seenUnits = new Set<number>();
  let bytes = 0;
  let full = false;
  const add = (lexeme: string): boolean => {
    const size = Buffer.byteLength(lexeme, 'utf8') + 4;
    if (bytes + size > maxBytes) return !(full = true);
    bytes += size;
    out.push(lexeme);
    return true;
  };
  const addText = (lexeme: string): boolean => seen.has(lexeme) || (add(lexeme) && (seen.add(lexeme), true));
  const addUnits = (key: number, lexeme: () => string): boolean => seenUnits.has(key) || (add(lexeme()) && (seenUnits.add(key), true));
  for (const text of texts) {
    const s = normalizeText(text);
    let prevStart = -1;
    let prevEnd = -1;
    scanTokens(s, (start, end, seg, joined) => {
      if (end - start > MAX_TOKEN_CHARS) {
        prevStart = prevEnd = -1; // a character buried in marks is no pair's half either
        return true;
      }
      if (!seg) return addText(s.slice(start, end));
      const single = end - start === 1;
      const code = s.charCodeAt(start);
      if (!(single ? addUnits(code, () => s[start]) : addText(s.slice(start, end)))) return false;
      if (joined && prevStart >= 0) {
        const ok = single && prevEnd - prevStart === 1
          ? addUnits(0x10000 + s.charCodeAt(prevStart) * 0x10000 + code, () => s.slice(prevStart, end))
          : addText(s.slice(prevStart, end));
        if (!ok) return false;
      }
      prevStart = start;
      prevEnd = end;
      return true;
    });
    if (full) break;
  }
  return out;
}

/** One term of a query: a word, or a run of joined characters of a segmented script. */
export type Term =
  | { kind: 'word'; text: string }
  | { kind: 'run'; text: string; units: string[] };

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
  return terms.filter((t) => !seen.has(t.text) && (seen.add(t.text), true));
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
