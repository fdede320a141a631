/**
 * writeUtf8 (src/json/write-utf8.ts) writes what Buffer#write writes: short ASCII strings in
 * JavaScript, anything else (a character outside ASCII anywhere in a short string, or a long
 * string) by Buffer#write, over whatever the loop wrote before it met that character.
 */
import { describe, expect, it } from 'vitest';
import { SHORT_STRING, writeUtf8 } from '../../../src/json/write-utf8.js';

const OTHERS = ['é', '€', '天', '😀', '\ud800', '\udfff', '\u0080', '\u07ff'];

function written(text: string, at = 3): Buffer {
  const buf = Buffer.alloc(at + text.length * 3 + 8, 0xaa);
  const n = writeUtf8(buf, text, at);
  expect(
    buf.subarray(0, at).every((b) => b === 0xaa),
    'nothing before `at`',
  ).toBe(true);
  return buf.subarray(at, at + n);
}

describe('writeUtf8', () => {
  it('writes ASCII strings of every length around the short limit, and the empty string', () => {
    const ascii = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).join('');
    for (let n = 0; n <= SHORT_STRING + 2; n++) {
      const text = ascii.repeat(2).slice(n, 2 * n);
      expect(written(text).equals(Buffer.from(text, 'utf8')), `${n} characters`).toBe(true);
    }
  });

  it('writes a short string with a character outside ASCII at any place as Buffer#write does', () => {
    for (const other of OTHERS) {
      for (const length of [1, 7, SHORT_STRING - 1, SHORT_STRING + 5]) {
        for (let at = 0; at < length; at++) {
          const text = 'x'.repeat(at) + other + 'y'.repeat(Math.max(0, length - at - 1));
          expect(
            written(text).equals(Buffer.from(text, 'utf8')),
            `${JSON.stringify(other)} at ${at} of ${length}`,
          ).toBe(true);
        }
      }
    }
  });

  it('writes long text, ASCII or not', () => {
    for (const text of ['fog over the valley '.repeat(50), `${'fog '.repeat(40)}€ and 😀`]) {
      expect(written(text, 0).equals(Buffer.from(text, 'utf8'))).toBe(true);
    }
  });
});
