/**
 * @module json/write-utf8
 * A string's UTF-8 bytes written into a Buffer, quicker for the short strings that JSON and
 * COPY encoders write most: punctuation, member names, ids, model names. Buffer#write is a
 * call into C++ whose fixed cost outweighs a short string; a JavaScript loop writes a short
 * ASCII string faster (docs/benchmarks.md, "Design facts behind the figures").
 */

/** Strings up to this many UTF-16 units are tried in JavaScript first. */
export const SHORT_STRING = 48;

/** Strings up to this many UTF-16 units get room for their longest encoding, unmeasured. */
const UNMEASURED = 4096;

/**
 * The room to make before writeUtf8: a short string's longest encoding (3 bytes per UTF-16
 * unit), which spares a Buffer.byteLength pass; a long one (a prompt) measured, so that it
 * never makes a buffer three times larger than what it holds.
 */
export function utf8Room(text: string): number {
  return text.length <= UNMEASURED ? text.length * 3 : Buffer.byteLength(text, 'utf8');
}

/**
 * Writes text as UTF-8 at `at` and returns the bytes written. The caller has made room for
 * it (utf8Room).
 */
export function writeUtf8(buf: Buffer, text: string, at: number): number {
  const n = text.length;
  if (n <= SHORT_STRING) {
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7f) break;
      buf[at + i] = c;
    }
    if (i === n) return n;
  }
  return buf.write(text, at, 'utf8');
}
