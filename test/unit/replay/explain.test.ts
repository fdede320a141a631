import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/normalize/step.js';
import { explainDifference, QUOTE_CHARS } from '../../../src/replay/explain.js';

const recorded: Message[] = [
  { role: 'system', content: 'You are a weather assistant.' },
  { role: 'user', content: "What's the weather in Paris?" },
];

describe('the first difference', () => {
  it('names the message, its role, the field, the character and quotes both sides', () => {
    const got: Message[] = [recorded[0], { role: 'user', content: "What's the weather in Lyon?" }];
    expect(explainDifference(recorded, got)).toEqual({
      message: 1,
      role: 'user',
      field: 'content',
      at_char: 22,
      recorded: "What's the weather in Paris?",
      got: "What's the weather in Lyon?",
    });
  });

  it('is null when the lists say the same thing', () => {
    expect(explainDifference(recorded, structuredClone(recorded))).toBeNull();
  });

  it('names a role change before anything else', () => {
    expect(
      explainDifference(recorded, [{ role: 'user', content: 'You are a weather assistant.' }, recorded[1]]),
    ).toMatchObject({ message: 0, role: 'system', field: 'role', at_char: 0, recorded: 'system', got: 'user' });
  });

  it('names a missing or an extra message', () => {
    expect(explainDifference(recorded, [recorded[0]])).toMatchObject({
      message: 1,
      role: 'user',
      field: 'missing',
      got: '',
    });
    expect(explainDifference([recorded[0]], recorded)).toMatchObject({
      message: 1,
      role: 'user',
      field: 'extra',
      recorded: '',
    });
  });

  it('compares tool calls and tool call ids as canonical JSON', () => {
    const a: Message[] = [
      { role: 'assistant', tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ];
    const b: Message[] = [
      { role: 'assistant', tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Lyon' } }] },
    ];
    expect(explainDifference(a, b)).toMatchObject({
      field: 'tool_calls',
      at_char: 23,
      recorded: '[{"arguments":{"city":"Paris"},"id":"c1","name":"get_weather"}]',
    });
    expect(
      explainDifference(
        [{ role: 'tool', tool_call_id: 'x1', content: 'r' }],
        [{ role: 'tool', tool_call_id: 'x2', content: 'r' }],
      ),
    ).toMatchObject({ field: 'tool_call_id', at_char: 1 });
  });

  it('counts characters, not UTF-16 units, and quotes a window around a difference in long text', () => {
    const long = `${'🙂'.repeat(500)}Paris${'.'.repeat(500)}`;
    const d = explainDifference(
      [{ role: 'user', content: long }],
      [{ role: 'user', content: long.replace('Paris', 'Lyon!') }],
    )!;
    expect(d.at_char).toBe(500);
    expect(Array.from(d.recorded.replace(/…/g, '')).length).toBe(QUOTE_CHARS);
    expect(d.recorded.startsWith('…')).toBe(true);
    expect(d.recorded).toContain('Paris');
    expect(d.got).toContain('Lyon!');
  });
});
