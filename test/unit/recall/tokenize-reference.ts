import { MAX_INDEX_BYTES, MAX_TOKEN_CHARS, normalizeText } from '../../../src/recall/tokenize.js';
import { scanTokens } from '../../../src/recall/scan.js';

/**
 * indexLexemes (src/recall/tokenize.ts) as first written, without the ASCII path or WordSet:
 * slower, plainly right, and kept as the specification the tests compare indexLexemes with.
 */
export function indexLexemesReference(texts: Iterable<string>, maxBytes = MAX_INDEX_BYTES): string[] {
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
