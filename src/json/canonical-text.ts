/**
 * @module json/canonical-text
 * Whether a JSON text is already in the server's rendering: exactly the bytes renderJson
 * (canonical.ts) writes for the value the text spells. Steps keep their request, response
 * and messages as canonical JSON text, so a reader can write that text into an answer as it
 * is instead of parsing it into objects and writing them out again; text in another
 * rendering (jsonb's, kept by stores migrated from jsonb columns) must be rendered again.
 *
 * The check is one pass over the text and builds nothing: no whitespace outside strings,
 * object members in strictly increasing UTF-16 order of their names, numbers as ECMAScript
 * writes them, and strings escaped as json-string.ts escapes them. It may say false for a
 * text that is canonical (an escaped member name, an escaped surrogate, nesting past
 * MAX_DEPTH): the caller then renders it again, which is only slower. It says true only for
 * a text that renderJson(JSON.parse(text)) reproduces byte for byte. Texts decoded from
 * UTF-8 (what a database hands back) hold no lone surrogates, the one string content this
 * pass does not look at.
 */

/** Characters a string holds as they are: everything but the quote, backslash and controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes
const PLAIN = /[^"\\\u0000-\u001f]*/y;
/** A JSON number token. */
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const MAX_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function isCanonicalJsonText(text: string): boolean {
  return value(text, 0, 0) === text.length;
}

/** The index after the value starting at i, or -1 when it is not in canonical form. */
function value(text: string, i: number, depth: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return string(text, i);
  if (c === 0x7b /* { */) return object(text, i, depth + 1);
  if (c === 0x5b /* [ */) return array(text, i, depth + 1);
  if (c === 0x74 /* t */) return text.startsWith('true', i) ? i + 4 : -1;
  if (c === 0x66 /* f */) return text.startsWith('false', i) ? i + 5 : -1;
  if (c === 0x6e /* n */) return text.startsWith('null', i) ? i + 4 : -1;
  if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) return number(text, i);
  return -1;
}

function object(text: string, i: number, depth: number): number {
  if (depth > MAX_DEPTH) return -1;
  i++;
  if (text.charCodeAt(i) === 0x7d /* } */) return i + 1;
  let previousStart = -1;
  let previousEnd = -1;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return -1;
    const end = string(text, i);
    if (end < 0) return -1;
    // The name between the quotes; an escaped one would have to be compared unescaped, which
    // is left to the slow path.
    for (let k = i + 1; k < end - 1; k++) if (text.charCodeAt(k) === BACKSLASH) return -1;
    if (previousStart >= 0 && !ascending(text, previousStart, previousEnd, i + 1, end - 1)) return -1;
    previousStart = i + 1;
    previousEnd = end - 1;
    if (text.charCodeAt(end) !== 0x3a /* : */) return -1;
    i = value(text, end + 1, depth);
    if (i < 0) return -1;
    const next = text.charCodeAt(i);
    if (next === 0x7d) return i + 1;
    if (next !== 0x2c /* , */) return -1;
    i++;
  }
}

/** Whether text[a, aEnd) sorts strictly before text[b, bEnd), by UTF-16 code units. */
function ascending(text: string, a: number, aEnd: number, b: number, bEnd: number): boolean {
  for (; a < aEnd && b < bEnd; a++, b++) {
    const x = text.charCodeAt(a);
    const y = text.charCodeAt(b);
    if (x !== y) return x < y;
  }
  return a === aEnd && b < bEnd;
}

function array(text: string, i: number, depth: number): number {
  if (depth > MAX_DEPTH) return -1;
  i++;
  if (text.charCodeAt(i) === 0x5d /* ] */) return i + 1;
  for (;;) {
    i = value(text, i, depth);
    if (i < 0) return -1;
    const next = text.charCodeAt(i);
    if (next === 0x5d) return i + 1;
    if (next !== 0x2c) return -1;
    i++;
  }
}

/** Escapes JSON.stringify writes as two characters (\b \t \n \f \r); other controls as \u00xx. */
const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

function string(text: string, i: number): number {
  i++;
  for (;;) {
    PLAIN.lastIndex = i;
    PLAIN.test(text);
    i = PLAIN.lastIndex;
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return -1; // a raw control character, or the text ended
    const e = text.charCodeAt(i + 1);
    if (
      e === QUOTE ||
      e === BACKSLASH ||
      e === 0x62 /* b */ ||
      e === 0x66 /* f */ ||
      e === 0x6e /* n */ ||
      e === 0x72 /* r */ ||
      e === 0x74 /* t */
    ) {
      i += 2;
      continue;
    }
    if (e !== 0x75 /* u */) return -1;
    // \u00xx, lower-case hex, for a control character without a two-character escape
    const hex = text.slice(i + 2, i + 6);
    if (!/^00[01][0-9a-f]$/.test(hex) || SHORT_ESCAPES.has(Number.parseInt(hex, 16))) return -1;
    i += 6;
  }
}

function number(text: string, i: number): number {
  NUMBER.lastIndex = i;
  if (!NUMBER.test(text)) return -1;
  const end = NUMBER.lastIndex;
  const token = text.slice(i, end);
  const n = Number(token);
  return Number.isFinite(n) && String(n) === token ? end : -1;
}
