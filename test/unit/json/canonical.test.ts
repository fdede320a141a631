/**
 * canonicalJson (src/json/canonical.ts) is RFC 8785 written for speed; the `canonicalize`
 * package, a plain implementation of the RFC, is its oracle: the same text for every value.
 * canonicalJsonBytes writes the same text as UTF-8 bytes, without the string. renderJson, the
 * server's rendering, writes a JSON value the same way too, and its indented form is the same
 * document.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import canonicalizeModule from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { prng } from '../../helpers/prng.js';
import {
  canonicalJson,
  canonicalJsonBytes,
  RecordedJson,
  renderJson,
  renderJsonBytes,
} from '../../../src/json/canonical.js';
import type { JsonValue } from '../../../src/json/json-value.js';

// The package is CommonJS (`module.exports = fn`) but its types declare a default export.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;
const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'corpus');

const PIECES = [
  'a',
  'Paris ',
  '"',
  '\\',
  '\n',
  '\t',
  '\u0000',
  '\u001f',
  '\u007f',
  'é',
  '€',
  '天气',
  '😀',
  '\ud800',
  '\udfff',
  '\u2028',
  '</script>',
  ' ',
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  0.2 + 0.1,
  1e21,
  1e-7,
  123456789012345680000,
  5e-324,
  2 ** 53 + 2,
  -1.5e300,
  333333333.33333329,
];
const KEYS = [
  'a',
  'b',
  'A',
  '1',
  '10',
  '2',
  '',
  'é',
  'e\u0301',
  '€',
  '\r',
  '😀',
  'ﬁ',
  '\ud7ff',
  '\ue000',
  'role',
  'content',
];

function randomString(rand: () => number, long: boolean): string {
  let s = '';
  const pieces = long ? 40 + Math.floor(rand() * 400) : Math.floor(rand() * 6);
  for (let i = 0; i < pieces; i++) s += rand() < 0.9 && long ? 'word ' : PIECES[Math.floor(rand() * PIECES.length)];
  return s;
}

function randomValue(rand: () => number, depth: number): JsonValue {
  const r = rand();
  if (depth > 3 || r < 0.35) {
    const k = rand();
    if (k < 0.1) return null;
    if (k < 0.2) return rand() < 0.5;
    if (k < 0.4) return NUMBERS[Math.floor(rand() * NUMBERS.length)];
    return randomString(rand, rand() < 0.5);
  }
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 5) }, () => randomValue(rand, depth + 1));
  const out: { [k: string]: JsonValue } = {};
  for (let i = Math.floor(rand() * 6); i > 0; i--)
    out[KEYS[Math.floor(rand() * KEYS.length)] + (rand() < 0.3 ? randomString(rand, false) : '')] = randomValue(
      rand,
      depth + 1,
    );
  return out;
}

describe('canonicalJson', () => {
  it('gives what the canonicalize package gives, for seeded random values', () => {
    const rand = prng(8785);
    const differ: unknown[] = [];
    for (let i = 0; i < 3000; i++) {
      const value = randomValue(rand, 0);
      if (canonicalJson(value) !== canonicalize(value)) differ.push(value);
    }
    expect(differ.slice(0, 3)).toEqual([]);
  });

  it('gives what the canonicalize package gives, for every value in the corpus captures', () => {
    const files = readdirSync(CORPUS, { recursive: true, encoding: 'utf8' }).filter(
      (f) => path.basename(f) === 'decoded.json',
    );
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const value = JSON.parse(readFileSync(path.join(CORPUS, f), 'utf8')) as JsonValue;
      expect(canonicalJson(value), f).toBe(canonicalize(value));
    }
  });

  it('writes long text that needs no escape as it is, and escapes the rest', () => {
    const plain = 'The river station recorded morning fog. '.repeat(10);
    expect(canonicalJson({ content: plain })).toBe(`{"content":"${plain}"}`);
    for (const odd of ['"', '\\', '\n', '\u0000', '\ud800', '\udfff', '😀']) {
      for (const text of [plain + odd, odd + plain, plain + odd + plain])
        expect(canonicalJson(text)).toBe(JSON.stringify(text));
    }
  });

  it('sorts members by UTF-16 code units, drops undefined members, and refuses what JSON cannot hold', () => {
    expect(canonicalJson({ '€': 1, '\r': 2, '😀': 3, ﬁ: 4, '1': 5, a: undefined } as unknown as JsonValue)).toBe(
      '{"\\r":2,"1":5,"€":1,"😀":3,"ﬁ":4}',
    );
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => canonicalJson(1n as unknown as JsonValue)).toThrow(TypeError);
  });
});

describe('canonicalJsonBytes', () => {
  const utf8 = (value: JsonValue) => Buffer.from(canonicalize(value)!, 'utf8');

  it('gives the UTF-8 of what the canonicalize package gives, for seeded random values', () => {
    const rand = prng(8786);
    const differ: unknown[] = [];
    for (let i = 0; i < 3000; i++) {
      const value = randomValue(rand, 0);
      if (!canonicalJsonBytes(value).equals(utf8(value))) differ.push(value);
    }
    expect(differ.slice(0, 3)).toEqual([]);
  });

  it('for every value in the corpus captures', () => {
    const files = readdirSync(CORPUS, { recursive: true, encoding: 'utf8' }).filter(
      (f) => path.basename(f) === 'decoded.json',
    );
    for (const f of files) {
      const value = JSON.parse(readFileSync(path.join(CORPUS, f), 'utf8')) as JsonValue;
      expect(canonicalJsonBytes(value).equals(utf8(value)), f).toBe(true);
    }
  });

  it('for text longer than the escaper takes at once, and values of megabytes one after another', () => {
    const long = 'Fog over the valley, "rain" later.\n'.repeat(5000); // 180 K characters, several pieces
    const values: JsonValue[] = [
      [{ role: 'user', content: long }],
      { a: `${long}\u0000é`, b: [long, 1.5, null, true] },
      'x'.repeat(3 * 1024 * 1024),
      { small: 'ok' },
    ];
    for (const value of values) expect(canonicalJsonBytes(value).equals(utf8(value))).toBe(true);
    // each result is its own copy, not a view of the reused buffer
    const first = canonicalJsonBytes({ k: 'first value that is long enough to go through the module, surely' });
    const copy = Buffer.from(first);
    canonicalJsonBytes({ k: 'second value, also long enough to go through the WebAssembly module' });
    expect(first.equals(copy)).toBe(true);
  });

  it('writes member names that need escapes the same the second time (they are kept), and past the names it keeps', () => {
    const tricky = { 'a"b': 1, é: 2, '\u0001': 3, '😀': 4, '\\': 5, role: 6 };
    for (let i = 0; i < 2; i++) expect(canonicalJsonBytes(tricky).equals(utf8(tricky))).toBe(true);
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}"\u00e9${i}`, i]));
    for (let i = 0; i < 2; i++) expect(canonicalJsonBytes(many).equals(utf8(many))).toBe(true);
  });

  it('refuses what JSON cannot hold, as canonicalJson does', () => {
    expect(() => canonicalJsonBytes([1, Number.NaN])).toThrow(TypeError);
    expect(() => canonicalJsonBytes({ a: 1n } as unknown as JsonValue)).toThrow(TypeError);
  });
});

describe('renderJson', () => {
  it('renders a JSON value as the canonicalize package does, and indented as the same document', () => {
    const rand = prng(8787);
    const differ: unknown[] = [];
    for (let i = 0; i < 3000; i++) {
      const value = randomValue(rand, 0);
      const text = renderJson(value);
      if (
        text !== canonicalize(value) ||
        renderJsonBytes(value).toString('utf8') !== text ||
        canonicalize(JSON.parse(renderJson(value, 2))) !== text
      )
        differ.push(value);
    }
    expect(differ.slice(0, 3)).toEqual([]);
  });

  it('writes what JSON lacks as the server answers it, compact and indented alike', () => {
    const value = {
      ns: 1_796_032_240_962_000_123n,
      nan: Number.NaN,
      gone: undefined,
      list: [undefined, () => 1, Number.POSITIVE_INFINITY],
      recorded: RecordedJson.ofObject('{"b":1.50,"a":[2]}'),
      bytes: new Uint8Array([104, 105]),
      at: new Date(0),
      nested: { toJSON: () => ({ z: 1, y: 2n }) },
    };
    const compact =
      '{"at":"1970-01-01T00:00:00.000Z","bytes":"aGk=","list":[null,null,null],"nan":null,' +
      '"nested":{"y":2,"z":1},"ns":1796032240962000123,"recorded":{"b":1.50,"a":[2]}}';
    expect(renderJson(value)).toBe(compact);
    expect(renderJsonBytes(value).toString('utf8')).toBe(compact);
    expect(renderJson(value, 2).replace(/\n */g, '').replaceAll('": ', '":')).toBe(compact);
  });
});
