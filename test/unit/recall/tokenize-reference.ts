import { MAX_STEP_WORDS, MAX_TOKEN_CHARS, normalizeText } from '../../../src/recall/tokenize.js';
import { scanTokens } from '../../../src/recall/scan.js';
import { wordHash } from '../../../src/recall/word-hash.js';

/**
 * The lexemes indexWords (src/recall/tokenize.ts) hashes, found as first written, without the
 * ASCII path or a hash table: slower, plainly right, and kept as the specification the tests
 * compare indexWords with (through hashLexemes).
 */
export function indexLexemesReference(texts: Iterable<string>, maxWords = MAX_STEP_WORDS): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let full = false;
  const add = (lexeme: string): boolean => {
    if (seen.has(lexeme)) return true;
    if (out.length >= maxWords) return !(full = true);
    seen.add(lexeme);
    out.push(lexeme);
    return true;
  };
  for (const text of texts) {
    const s = normalizeText(text);
    let prevStart = -1;
    scanTokens(s, (start, end, seg, joined) => {
      if (end - start > MAX_TOKEN_CHARS) {
        prevStart = -1; // a character buried in marks is no pair's half either
        return true;
      }
      if (!add(s.slice(start, end))) return false;
      if (!seg) return true;
      if (joined && prevStart >= 0 && !add(s.slice(prevStart, end))) return false;
      prevStart = start;
      return true;
    });
    if (full) break;
  }
  return out;
}

/** Lexemes as indexWords stores them: each one's hash lanes, in order. */
export function hashLexemes(lexemes: readonly string[]): Int32Array {
  const out = new Int32Array(lexemes.length * 2);
  lexemes.forEach((l, i) => {
    [out[2 * i], out[2 * i + 1]] = wordHash(l);
  });
  return out;
}
