/**
 * toJsonText (src/spans/attribute-json.ts): the JSON the span and log rows store for
 * attributes, events and bodies. Plain values are exactly JSON.stringify's, whether they hold
 * long text (written by json-string.ts) or not; a bigint or bytes take the exact writer.
 */
import { describe, expect, it } from 'vitest';
import { toJsonText } from '../../../src/spans/attribute-json.js';

const prompt = (n: number) => 'You are a careful assistant. Answer "briefly".\n\tCite\\sources. '.repeat(Math.ceil(n / 60)).slice(0, n);

describe('toJsonText', () => {
  it('gives JSON.stringify\'s text for attributes holding long text, escapes and nesting included', () => {
    const values: unknown[] = [
      { 'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt(5000) }] }]), 'gen_ai.request.model': 'gpt-4o', n: 3, ok: true, none: null },
      { nested: { list: [prompt(100), 1.5, false, null, { deep: prompt(70) }], short: 'x' }, [prompt(80)]: 'a long key' },
      [prompt(64), prompt(63), 'é'.repeat(100), '😀'.repeat(40), '\ud800'.repeat(70)],
      [{ time_unix_nano: '1796032240962000000', name: 'gen_ai.user.message', attributes: { content: prompt(300) }, dropped_attributes_count: 0 }],
      prompt(1 << 17),
      { skipped: undefined, kept: prompt(90), list: [undefined, prompt(65)] },
    ];
    for (const value of values) expect(toJsonText(value)).toBe(JSON.stringify(value));
  });

  it('keeps an int64 beyond 2^53 exact and writes bytes as base64, beside long text', () => {
    const text = toJsonText({ big: 9007199254740993n, bytes: new Uint8Array([1, 2, 255]), content: prompt(200) });
    expect(text).toContain('"big":9007199254740993');
    expect(text).toContain('"bytes":"AQL/"');
    expect(JSON.parse(text).content).toBe(prompt(200));
  });
});
