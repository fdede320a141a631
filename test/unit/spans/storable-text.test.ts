import { describe, expect, it } from 'vitest';
import { storableLogs, storableSpans, storableString } from '../../../src/spans/storable-text.js';
import { log, span } from '../../helpers/span-builder.js';

describe('storable text', () => {
  it('replaces NUL and lone surrogates with U+FFFD and keeps surrogate pairs', () => {
    expect(storableString('a\u0000b')).toBe('a\ufffdb');
    expect(storableString('\ud800x\udc00')).toBe('\ufffdx\ufffd');
    expect(storableString('end\ud83d')).toBe('end\ufffd');
    expect(storableString('😀 ok \ud83d\ude00')).toBe('😀 ok 😀');
  });

  it('hands back the same records when nothing needs replacing', () => {
    const spans = [span({ name: 'chat', attributes: { a: 'b', n: 1, list: ['x', { y: 'z' }] } })];
    expect(storableSpans(spans)).toBe(spans);
    const logs = [log('llm', 'gen_ai.user.message', { content: 'hi 😀' })];
    expect(storableLogs(logs)).toBe(logs);
  });

  it('replaces in nested keys and values, and keeps a "__proto__" key an own property', () => {
    const [s] = storableSpans([
      span({ attributes: { ['__proto__']: 'p\u0000', m: { ['k\u0000']: ['v\ud800', 2] } } as never }),
    ]);
    expect(Object.getPrototypeOf(s.attributes)).toBe(Object.prototype);
    expect(Object.hasOwn(s.attributes, '__proto__')).toBe(true);
    expect(s.attributes.m).toEqual({ 'k\ufffd': ['v\ufffd', 2] });
  });

  it('replaces a shared frozen resource once, frozen', () => {
    const resource = Object.freeze({ 'service.name': 'svc\u0000' });
    const [a, b] = storableSpans([
      { ...span({ id: 'a' }), resource },
      { ...span({ id: 'b' }), resource },
    ]);
    expect(a.resource).toEqual({ 'service.name': 'svc\ufffd' });
    expect(a.resource).toBe(b.resource);
    expect(Object.isFrozen(a.resource)).toBe(true);
  });
});
