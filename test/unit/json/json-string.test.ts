/**
 * jsonString (src/json/json-string.ts and its WebAssembly, json-string.wat) gives exactly
 * what JSON.stringify gives for a string: every ASCII character alone and around the module's
 * 16-byte steps, long text handed over in pieces, and text it leaves to JSON.stringify.
 */
import { describe, expect, it } from 'vitest';
import { compileWat } from '../../../scripts/build-wasm.mjs';
import { JSON_STRING_WASM_LOADED, jsonString, WASM_MIN_CHARS } from '../../../src/json/json-string.js';
import { JSON_STRING_WASM } from '../../../src/json/json-string-wasm.js';

const ASCII = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
const filler = (n: number) =>
  'The river station recorded morning fog near the valley. '.repeat(Math.ceil(n / 56) + 1).slice(0, n);

/** A deterministic pseudo-random generator (xorshift32), so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('jsonString', () => {
  it('is the module json-string.wat compiles to (npm run build:wasm after changing it), and it loads here', async () => {
    expect(JSON_STRING_WASM).toBe((await compileWat('json-string')).toString('base64'));
    // else every test below would compare JSON.stringify with itself
    expect(JSON_STRING_WASM_LOADED).toBe(true);
  });

  it('escapes every ASCII character as JSON.stringify does, at every place around the 16-byte steps', () => {
    for (const c of ASCII) {
      for (const length of [WASM_MIN_CHARS, WASM_MIN_CHARS + 17, 100]) {
        for (let at = 0; at < length; at += 1) {
          const text = filler(at) + c + filler(length - at - 1);
          expect(jsonString(text), `${JSON.stringify(c)} at ${at} of ${length}`).toBe(JSON.stringify(text));
        }
      }
    }
  });

  it('escapes text made only of characters to escape, and runs of them', () => {
    const all = ASCII.join('');
    expect(jsonString(all.repeat(3))).toBe(JSON.stringify(all.repeat(3)));
    const controls = ASCII.slice(0, 32).join('');
    expect(jsonString(controls.repeat(40))).toBe(JSON.stringify(controls.repeat(40)));
    expect(jsonString('"\\'.repeat(5000))).toBe(JSON.stringify('"\\'.repeat(5000)));
  });

  it('gives what JSON.stringify gives for seeded random ASCII text, short and long', () => {
    const next = random(20261201);
    for (let i = 0; i < 300; i++) {
      const length = Math.floor(next() ** 3 * 200_000);
      // mostly letters and spaces, with a sprinkling of what needs escaping
      const chars = Array.from({ length }, () =>
        next() < 0.97 ? 'abcdefghij klmnop'[Math.floor(next() * 17)] : ASCII[Math.floor(next() * 128)],
      );
      const text = chars.join('');
      expect(jsonString(text), `length ${length}`).toBe(JSON.stringify(text));
    }
  });

  it("hands text longer than its memory holds over in pieces, escapes on the pieces' edges included", () => {
    const piece = 64 * 1024;
    for (const at of [piece - 1, piece, piece + 1, 2 * piece - 1, 2 * piece]) {
      const text = `${filler(at)}\n"${filler(3 * piece - at)}`;
      expect(jsonString(text), `escapes at ${at}`).toBe(JSON.stringify(text));
    }
    const large = filler(5 * 1024 * 1024 + 3);
    expect(jsonString(large)).toBe(JSON.stringify(large));
  });

  it('leaves other text to JSON.stringify, with the same result: Latin-1, BMP, surrogate pairs and lone surrogates, empty and short strings', () => {
    for (const odd of ['é', '€', 'ä¸­æ–‡', '你好', '😀', '\ud800', '\udfff', '\u007f', '\u0080', '\u2028']) {
      for (const text of [filler(200) + odd, odd + filler(200), filler(100) + odd + filler(100)]) {
        expect(jsonString(text), JSON.stringify(odd)).toBe(JSON.stringify(text));
      }
    }
    for (const text of ['', 'a', '"', `${filler(WASM_MIN_CHARS - 1)}\n`])
      expect(jsonString(text)).toBe(JSON.stringify(text));
  });
});
