/**
 * toJsonText (src/tapes/attribute-json.ts): the JSON the span and log rows store for
 * attributes, events and bodies. Plain values are exactly JSON.stringify's, whether they hold
 * long text (written by json-string.ts) or not; a bigint or bytes take the exact writer.
 */
import { describe, expect, it } from 'vitest';
import type { ByteSink } from '../../../src/json/json-string.js';
import { AttributeJson, toJsonText, writeJsonText } from '../../../src/tapes/attribute-json.js';

/** writeJsonText's bytes, gathered the way a COPY buffer takes them. */
function written(value: unknown): Buffer {
  const pieces: Buffer[] = [];
  const sink: ByteSink = {
    bytes: (chunk) => pieces.push(Buffer.from(chunk)),
    utf8: (text) => pieces.push(Buffer.from(text, 'utf8')),
  };
  writeJsonText(value, sink);
  return Buffer.concat(pieces);
}

const prompt = (n: number) =>
  'You are a careful assistant. Answer "briefly".\n\tCite\\sources. '.repeat(Math.ceil(n / 60)).slice(0, n);

describe('toJsonText', () => {
  it("gives JSON.stringify's text for attributes holding long text, escapes and nesting included", () => {
    const values: unknown[] = [
      {
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt(5000) }] }]),
        'gen_ai.request.model': 'gpt-4o',
        n: 3,
        ok: true,
        none: null,
      },
      {
        nested: { list: [prompt(100), 1.5, false, null, { deep: prompt(70) }], short: 'x' },
        [prompt(80)]: 'a long key',
      },
      [prompt(64), prompt(63), 'é'.repeat(100), '😀'.repeat(40), '\ud800'.repeat(70)],
      [
        {
          time_unix_nano: '1796032240962000000',
          name: 'gen_ai.user.message',
          attributes: { content: prompt(300) },
          dropped_attributes_count: 0,
        },
      ],
      prompt(1 << 17),
      { skipped: undefined, kept: prompt(90), list: [undefined, prompt(65)] },
    ];
    for (const value of values) expect(toJsonText(value)).toBe(JSON.stringify(value));
    // written into a sink (binary COPY), the same text as UTF-8
    for (const value of values) expect(written(value).equals(Buffer.from(JSON.stringify(value), 'utf8'))).toBe(true);
  });

  it('writes into a sink what it returns, for short, exact and empty values too', () => {
    const values: unknown[] = [
      {},
      [],
      'short',
      42,
      null,
      { a: 1, b: 'x' },
      { big: 9007199254740993n, bytes: new Uint8Array([1, 2, 255]), content: prompt(200) },
      { 'a"b': prompt(70), é: [prompt(64), { f: () => 1 }], nested: [[[prompt(100)]]] },
      [Symbol('s'), prompt(80)],
    ];
    for (const value of values) {
      expect(written(value).toString('utf8')).toBe(toJsonText(value));
      expect(String(new AttributeJson(value))).toBe(toJsonText(value));
    }
  });

  it('keeps an int64 beyond 2^53 exact and writes bytes as base64, beside long text', () => {
    const text = toJsonText({ big: 9007199254740993n, bytes: new Uint8Array([1, 2, 255]), content: prompt(200) });
    expect(text).toContain('"big":9007199254740993');
    expect(text).toContain('"bytes":"AQL/"');
    expect(JSON.parse(text).content).toBe(prompt(200));
  });
});
