/**
 * A message's words read from its value (what ingest does where it derives a large request on
 * its own thread) are the words read from its stored, canonical JSON (what every other path
 * does): the same strings and numbers, in another key order, which matters only where a
 * message has as many distinct words as one keeps, and then the value gives none.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJsonBytes } from '../../../src/json/canonical.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { messageValueWords, messageWords } from '../../../src/recall/recorded-text.js';
import { MAX_STEP_WORDS } from '../../../src/recall/tokenize.js';

const fromStored = (message: JsonValue) => messageWords(canonicalJsonBytes(message).toString('utf8'));

describe('messageValueWords', () => {
  it.each<[string, JsonValue]>([
    ['plain content', { role: 'user', content: 'Which platform for Lyon, 10:05? Über Dijon.' }],
    [
      'content parts, keys in no sorted order',
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Wetter in München', lang: 'de' },
          { type: 'image', url: 'https://example.com/a.png', detail: { z: 'high', a: 3 } },
        ],
      },
    ],
    [
      'tool calls with arguments and numbers',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 3, ratio: 0.1, big: 1e21, neg: -0 } }],
      },
    ],
    ['unspaced scripts and escapes', { role: 'user', content: '上海天气预报 "quoted"\n\ttab \\ back' }],
    ['a payload reference in content', { role: 'user', content: [{ type: 'text', text: { $payload: 'sha256/00' } }] }],
  ])('gives the stored JSON’s words: %s', (_, message) => {
    expect(messageValueWords(message)).toEqual(fromStored(message));
  });

  it('gives none for a message with as many distinct words as one keeps', () => {
    const content = Array.from({ length: MAX_STEP_WORDS }, (_, i) => `w${i}`).join(' ');
    expect(messageValueWords({ role: 'user', content })).toBeUndefined();
    const fewer = Array.from({ length: MAX_STEP_WORDS - 1 }, (_, i) => `w${i}`).join(' ');
    expect(messageValueWords({ role: 'user', content: fewer })).toEqual(fromStored({ role: 'user', content: fewer }));
  });
});
