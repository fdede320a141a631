/**
 * @module recall/scan
 * The character scanner under tokenize.ts: finds words (runs of letters, marks and digits of
 * spaced scripts) and characters of unspaced scripts (Han, Hiragana, Katakana, Hangul, Thai,
 * Lao, Khmer, Myanmar, each with the combining marks after it) in already-normalized text.
 *
 * Unicode property regexes are slow per character on non-Latin text (V8 searches the class
 * for every character), and ingest scans every prompt, so each code point is classified
 * once: ASCII by a table, the rest of the BMP by 256-entry pages built on first use with the
 * property regexes, astral code points (rare) as they come.
 */

const SEGMENTED =
  '\\p{scx=Han}\\p{scx=Hira}\\p{scx=Kana}\\p{scx=Hang}\\p{scx=Thai}\\p{scx=Laoo}\\p{scx=Khmr}\\p{scx=Mymr}';
const IS_SEGMENTED = new RegExp(`^[${SEGMENTED}]$`, 'u');
const IS_LETTER = /^[\p{L}\p{N}]$/u;
const IS_MARK = /^\p{M}$/u;

const OTHER = 0;
/** a letter or digit of a spaced script */
const WORD = 1;
/** a combining mark of a spaced script: part of a word, or of the character before it */
const WORD_MARK = 2;
/** a letter or digit of an unspaced script */
const SEG = 3;
/** a combining mark of an unspaced script (Thai vowel signs): starts a character if alone */
const SEG_MARK = 4;

function classify(cp: number): number {
  const ch = String.fromCodePoint(cp);
  const mark = IS_MARK.test(ch);
  if (!mark && !IS_LETTER.test(ch)) return OTHER;
  const seg = IS_SEGMENTED.test(ch);
  return mark ? (seg ? SEG_MARK : WORD_MARK) : seg ? SEG : WORD;
}

const ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) ASCII[c] = classify(c);

/**
 * For each ASCII code, the lower-case form of the character when it is part of a word, else
 * 0: what the ASCII fast path of indexWords scans by. No ASCII character is a mark or of an
 * unspaced script, so an ASCII word is a run of letters and digits and nothing else.
 */
export const ASCII_WORD_LOWER = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (ASCII[c] === WORD) ASCII_WORD_LOWER[c] = String.fromCharCode(c).toLowerCase().charCodeAt(0);
}

const pages: (Uint8Array | undefined)[] = new Array(256);

function pageOf(high: number): Uint8Array {
  const page = new Uint8Array(256);
  const base = high << 8;
  for (let low = 0; low < 256; low++) {
    const cp = base + low;
    page[low] = cp >= 0xd800 && cp <= 0xdfff ? OTHER : classify(cp);
  }
  pages[high] = page;
  return page;
}

function classOf(cp: number): number {
  if (cp < 0x80) return ASCII[cp];
  if (cp > 0xffff) return classify(cp);
  return (pages[cp >> 8] ?? pageOf(cp >> 8))[cp & 0xff];
}

/**
 * Calls visit(start, end, seg, joined) for each token of s, in order: `seg` for a character
 * of an unspaced script, `joined` when it directly follows another one. Stops when visit
 * returns false.
 */
export function scanTokens(
  s: string,
  // biome-ignore lint/suspicious/noConfusingVoidType: visitors that return nothing go on
  visit: (start: number, end: number, seg: boolean, joined: boolean) => boolean | void,
): void {
  const n = s.length;
  let previousSegEnd = -1;
  let i = 0;
  while (i < n) {
    const cp = s.codePointAt(i) as number;
    const cls = classOf(cp);
    let j = i + (cp > 0xffff ? 2 : 1);
    if (cls === OTHER) {
      i = j;
      continue;
    }
    const seg = cls === SEG || cls === SEG_MARK;
    while (j < n) {
      const next = s.codePointAt(j) as number;
      const c = classOf(next);
      // a character takes the marks after it; a word takes letters, digits and marks
      if (seg ? c !== WORD_MARK && c !== SEG_MARK : c !== WORD && c !== WORD_MARK) break;
      j += next > 0xffff ? 2 : 1;
    }
    if (visit(i, j, seg, seg && previousSegEnd === i) === false) return;
    previousSegEnd = seg ? j : -1;
    i = j;
  }
}
