/**
 * isCanonicalJsonText: true only for text that renderJson(JSON.parse(text)) writes back byte
 * for byte, so a reader may splice it into an answer as it is; false for every other
 * rendering of the same value (jsonb's above all), and for text that is not JSON.
 */
import { describe, expect, it } from 'vitest';
import { isCanonicalJsonText } from '../../../src/json/canonical-text.js';
import { canonicalJson, renderJson } from '../../../src/json/canonical.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { prng } from '../../helpers/prng.js';

function randomValue(next: () => number, depth = 0): JsonValue {
  const pick = Math.floor(next() * (depth > 3 ? 4 : 6));
  const text = () => {
    const chars = [
      'a',
      'Z',
      ' ',
      '"',
      '\\',
      '\n',
      '\t',
      '\u0001',
      '\u001f',
      'é',
      '日',
      '😀',
      '\u2028',
      '/',
      '\u007f',
      '\b',
    ];
    let s = '';
    const n = Math.floor(next() * 12);
    for (let i = 0; i < n; i++) s += chars[Math.floor(next() * chars.length)];
    return s;
  };
  switch (pick) {
    case 0:
      return text();
    case 1:
      return [0, -1, 1.5, 1e21, 1e-7, 123456789012, 0.1 + 0.2, -2.5e-300][Math.floor(next() * 8)];
    case 2:
      return [true, false, null][Math.floor(next() * 3)];
    case 3:
      return '';
    case 4: {
      const out: JsonValue[] = [];
      const n = Math.floor(next() * 4);
      for (let i = 0; i < n; i++) out.push(randomValue(next, depth + 1));
      return out;
    }
    default: {
      const out: { [k: string]: JsonValue } = {};
      const n = Math.floor(next() * 5);
      for (let i = 0; i < n; i++)
        out[['role', 'content', 'b', 'aa', 'é', '10', '2', 'tool_calls'][Math.floor(next() * 8)]] = randomValue(
          next,
          depth + 1,
        );
      return out;
    }
  }
}

describe('isCanonicalJsonText', () => {
  it('accepts what the canonical writer writes, and renderJson gives each accepted text back', () => {
    const next = prng(7);
    for (let i = 0; i < 3000; i++) {
      const text = canonicalJson(randomValue(next));
      expect(isCanonicalJsonText(text)).toBe(true);
      expect(renderJson(JSON.parse(text))).toBe(text);
    }
  });

  it('refuses jsonb rendering and every other spelling of a value', () => {
    for (const text of [
      '{"content": "hi", "role": "user"}', // jsonb: spaces, and keys by length first
      '{"role":"user","content":"hi"}',
      '[{"a":1}, {"a":2}]',
      '[0.0000001]', // jsonb writes numbers out in full
      '1000000000000000000000',
      '[1.50]',
      '1E5',
      '-0',
      '{"a":1,"a":1}',
      ' {}',
      '{} ',
      '"\\u0041"',
      '"\\/"',
      '"\\u001F"',
      '"\\u0008"',
      '"\\ud83d\\ude00"',
      '"\u0001"',
      '{"a":1',
      '',
      'nul',
      '[1,]',
      '{"a\\n":1}',
    ]) {
      expect(isCanonicalJsonText(text), text).toBe(false);
    }
  });

  it('says true only where rendering again gives the same bytes', () => {
    for (const text of [
      '{}',
      '[]',
      '""',
      '"\\u001f\\b\\"\\\\"',
      '1e+21',
      '1e-7',
      '[null,true,false]',
      '{"":1,"a":{"b":[]}}',
    ]) {
      expect(isCanonicalJsonText(text), text).toBe(true);
      expect(renderJson(JSON.parse(text))).toBe(text);
    }
    const deep = `${'['.repeat(300)}${']'.repeat(300)}`;
    expect(isCanonicalJsonText(deep)).toBe(false); // past the depth it checks: rendered again, still right
  });
});
