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
 *
 * Speed: indexLexemes runs on every step at ingest, so it takes a short cut for a string that
 * is all ASCII (most of what agents record: English, JSON, code). Such a string's normal form
 * is its lower case (NFKC leaves ASCII as it is, and the other folds touch no ASCII character),
 * and its words are its runs of ASCII letters and digits (no ASCII character is a mark or of an
 * unspaced script), so it is read from its bytes and lower-cased by a table, without
 * normalizeText or the Unicode scanner. Any other string takes the general path. Both paths
 * look lexemes up in one set probed by a span of the text (WordSet), so a word met again, most
 * of a prompt's words, builds no string. The output is that of the plain implementation the
 * tests keep (test/unit/recall/tokenize-reference.ts) and hold it to.
 */

import { ASCII_WORD_LOWER, scanTokens } from './scan.js';

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
  // The set is reused from call to call; a call made while one runs (texts a generator that
  // indexes) makes its own.
  const words = spareWords ?? new WordSet();
  spareWords = undefined;
  const index = new LexemeIndex(maxBytes, words);
  for (const text of texts) {
    const bytes = asciiBytes(text);
    if (!(bytes !== null ? index.addAscii(text, bytes) : index.addText(normalizeText(text)))) break;
  }
  words.clear();
  spareWords = words;
  return index.lexemes;
}

/** The lexemes of one step as they are found: each once, in first-use order, up to a byte cap. */
class LexemeIndex {
  readonly lexemes: string[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number, private readonly words: WordSet) {}

  /**
   * Adds the words of text, all ASCII, whose bytes are b (overwritten); false when the cap is
   * reached. A word's lexeme is its lower case, and its UTF-8 size its length.
   */
  addAscii(text: string, b: Uint8Array): boolean {
    const n = text.length;
    let lower: string | undefined;
    let start = 0;
    while (start < n) {
      let c = ASCII_WORD_LOWER[b[start]];
      if (c === 0) {
        start++;
        continue;
      }
      b[start] = c;
      let hash = Math.imul(FNV_OFFSET ^ c, FNV_PRIME);
      let end = start + 1;
      while (end < n && (c = ASCII_WORD_LOWER[b[end]]) !== 0) {
        b[end] = c; // lower-cased in place: the word set compares and copies b as it is
        hash = Math.imul(hash ^ c, FNV_PRIME);
        end++;
      }
      if (end - start <= MAX_TOKEN_CHARS) {
        hash = finishHash(hash);
        const slot = this.words.find(b, start, end, hash);
        if (slot < 0) {
          lower ??= text.toLowerCase();
          if (!this.append(lower.slice(start, end), end - start + 4)) return false;
          this.words.insert(~slot, hash, b, start, end);
        }
      }
      start = end;
    }
    return true;
  }

  /** Adds the words, characters and pairs of s (normalized); false when the cap is reached. */
  addText(s: string): boolean {
    const u = unitsOf(s);
    let prevStart = -1;
    let full = false;
    scanTokens(s, (start, end, seg, joined) => {
      if (end - start > MAX_TOKEN_CHARS) {
        prevStart = -1; // a character buried in marks is no pair's half either
        return true;
      }
      if (!this.addSpan(s, u, start, end)) return !(full = true);
      if (!seg) return true;
      if (joined && prevStart >= 0 && !this.addSpan(s, u, prevStart, end)) return !(full = true);
      prevStart = start;
      return true;
    });
    return !full;
  }

  /** Adds s[start, end), whose UTF-16 units are u[start, end), unless it is there already; false when it does not fit. */
  private addSpan(s: string, u: Uint16Array, start: number, end: number): boolean {
    const hash = hashUnits(u, start, end);
    const slot = this.words.find(u, start, end, hash);
    if (slot >= 0) return true;
    const lexeme = s.slice(start, end);
    if (!this.append(lexeme, Buffer.byteLength(lexeme, 'utf8') + 4)) return false;
    this.words.insert(~slot, hash, u, start, end);
    return true;
  }

  private append(lexeme: string, size: number): boolean {
    if (this.bytes + size > this.maxBytes) return false;
    this.bytes += size;
    this.lexemes.push(lexeme);
    return true;
  }
}

const encoder = new TextEncoder();
/** Holds the bytes of each text up to its size; a longer one gets a buffer of its own. */
const scratch = new Uint8Array(64 * 1024);
const NON_ASCII = /[^\u0000-\u007f]/;

/** Up to this length (most strings of a step), a JS loop is quicker than a call to encodeInto. */
const SHORT_TEXT = 32;

/**
 * The bytes of text, one per character, when it is all ASCII, in a buffer the caller may
 * overwrite; else null. Any other character takes two UTF-8 bytes or more, so one byte per
 * character read means ASCII.
 */
function asciiBytes(text: string): Uint8Array | null {
  if (text.length <= SHORT_TEXT) {
    for (let k = 0; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c > 0x7f) return null;
      scratch[k] = c;
    }
    return scratch;
  }
  let into = scratch;
  if (text.length > scratch.length) {
    if (NON_ASCII.test(text)) return null;
    into = new Uint8Array(text.length);
  }
  const { read, written } = encoder.encodeInto(text, into);
  return read === text.length && written === text.length ? into : null;
}

// FNV-1a over UTF-16 units, the same whether a lexeme is read from bytes or from a string.
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** Brings the high bits down into the low ones the table is indexed by. */
function finishHash(hash: number): number {
  return hash ^ (hash >>> 16);
}

function hashUnits(u: Uint16Array, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let k = start; k < end; k++) hash = Math.imul(hash ^ u[k], FNV_PRIME);
  return finishHash(hash);
}

/** Holds the UTF-16 units of each normalized text on the general path, up to its size. */
let scratchUnits = new Uint16Array(64 * 1024);

/** The UTF-16 units of s, in a buffer reused from text to text. */
function unitsOf(s: string): Uint16Array {
  if (s.length > scratchUnits.length) scratchUnits = new Uint16Array(s.length);
  for (let k = 0; k < s.length; k++) scratchUnits[k] = s.charCodeAt(k);
  return scratchUnits;
}

const INITIAL_SLOTS = 256;
const INITIAL_UNITS = 4096;
/** Past these sizes (a step of many words), clear() shrinks the set rather than keep it. */
const KEPT_SLOTS = 4096;
const KEPT_UNITS = 64 * 1024;

/**
 * The lexemes met so far, probed by a span of the text being read (its bytes on the ASCII path,
 * its characters on the general one), so that looking a word up builds no string: a Set<string>
 * would need each word sliced and hashed, and that was most of indexLexemes' time. Open
 * addressing, at most half full; a slot holds a hash, and the start and length of its lexeme's
 * UTF-16 units in `units`; a length of 0 marks a free slot.
 */
class WordSet {
  private slots = new Int32Array(INITIAL_SLOTS * 3);
  private mask = INITIAL_SLOTS - 1;
  private count = 0;
  private units = new Uint16Array(INITIAL_UNITS);
  private used = 0;

  /**
   * The slot holding the lexeme whose UTF-16 units are src[start, end), else ~ the free slot it
   * would take. src is a text's bytes on the ASCII path (each byte one unit, lower-cased) and
   * its units on the general one.
   */
  find(src: Uint8Array | Uint16Array, start: number, end: number, hash: number): number {
    const slots = this.slots;
    const units = this.units;
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const length = slots[slot * 3 + 2];
      if (length === 0) return ~slot;
      if (length !== end - start || slots[slot * 3] !== hash) continue;
      let u = slots[slot * 3 + 1];
      let k = start;
      while (k < end && units[u] === src[k]) {
        u++;
        k++;
      }
      if (k === end) return slot;
    }
  }

  /** Adds the lexeme src[start, end) at the free slot find gave. */
  insert(slot: number, hash: number, src: Uint8Array | Uint16Array, start: number, end: number): void {
    let u = this.take(slot, hash, end - start);
    const units = this.units; // after take, which may have grown it
    for (let k = start; k < end; k++) units[u++] = src[k];
  }

  /** Empties the set for the next step. */
  clear(): void {
    if (this.mask >= KEPT_SLOTS) {
      this.slots = new Int32Array(INITIAL_SLOTS * 3);
      this.mask = INITIAL_SLOTS - 1;
    } else if (this.count > 0) this.slots.fill(0);
    if (this.units.length > KEPT_UNITS) this.units = new Uint16Array(INITIAL_UNITS);
    this.count = 0;
    this.used = 0;
  }

  /** Fills a free slot for a lexeme of `length` units; returns where its units go. */
  private take(slot: number, hash: number, length: number): number {
    if (this.used + length > this.units.length) {
      const units = new Uint16Array(Math.max(this.units.length * 2, this.used + length));
      units.set(this.units);
      this.units = units;
    }
    const start = this.used;
    this.used += length;
    this.slots[slot * 3] = hash;
    this.slots[slot * 3 + 1] = start;
    this.slots[slot * 3 + 2] = length;
    if (++this.count * 2 > this.mask) this.grow();
    return start;
  }

  /** Doubles the table, moving each slot to where its hash now points. */
  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2);
    const mask = this.mask * 2 + 1;
    for (let at = 0; at < old.length; at += 3) {
      if (old[at + 2] === 0) continue;
      let slot = old[at] & mask;
      while (slots[slot * 3 + 2] !== 0) slot = (slot + 1) & mask;
      slots[slot * 3] = old[at];
      slots[slot * 3 + 1] = old[at + 1];
      slots[slot * 3 + 2] = old[at + 2];
    }
    this.slots = slots;
    this.mask = mask;
  }
}

let spareWords: WordSet | undefined = new WordSet();

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
