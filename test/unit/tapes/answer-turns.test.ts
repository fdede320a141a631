/**
 * tapes/answer-turns: an answer is stored as its turn (without finish_reason) only when the
 * reason's place in its canonical JSON can be found again without parsing, and splicing the
 * reason back gives the answer's canonical JSON byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/json/canonical.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { answerReason, turnOf, withFinishReason } from '../../../src/tapes/answer-turns.js';

type Answer = { [key: string]: JsonValue };

const answers: Answer[] = [
  { role: 'assistant', content: 'Platform 4.', finish_reason: 'stop' },
  { role: 'assistant', content: 'a "quoted" word, a \\ and a \\" pair, a tab\t, a line\n', finish_reason: 'length' },
  { role: 'assistant', content: 'ends in a backslash \\', finish_reason: 'stop' },
  { role: 'assistant', content: '', finish_reason: 'stop' },
  { role: 'assistant', content: '北京天气 🌦 \u0001 \u2028', finish_reason: 'content_filter' },
  {
    role: 'assistant',
    tool_calls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Paris', note: '"content":"x",' } }],
    finish_reason: 'tool_calls',
  },
  { role: 'assistant', content: 'odd reason', finish_reason: 'a "reason" with \\ and \n' },
  { role: 'model', content: 'Gemini says so.', finish_reason: 'stop' },
];

/** The turn's text cut from the answer's canonical JSON. */
const turnText = (answer: Answer, reason: string) =>
  Buffer.from(turnOf(Buffer.from(canonicalJson(answer)), reason) ?? []).toString('utf8');

describe('answerReason, turnOf and withFinishReason', () => {
  it.each(answers.map((a) => [canonicalJson(a), a] as const))('gives back %s byte for byte', (text, answer) => {
    const reason = answerReason(answer);
    expect(reason).toBe(answer.finish_reason);
    const turn = turnText(answer, reason as string);
    expect(JSON.parse(turn)).not.toHaveProperty('finish_reason');
    expect(withFinishReason(turn, reason as string)).toBe(text);
  });

  it('the turn is the message as history resends it: the answer without its reason', () => {
    const { finish_reason: _, ...history } = answers[1];
    expect(turnText(answers[1], answerReason(answers[1]) as string)).toBe(canonicalJson(history));
  });

  it('stores whole an answer whose reason could not be found again without parsing', () => {
    // no reason to take out
    expect(answerReason({ role: 'assistant', content: 'hi' })).toBeUndefined();
    expect(answerReason({ role: 'assistant', content: 'hi', finish_reason: null })).toBeUndefined();
    // content that is not a string: its end is not found by a scan for a quote
    expect(
      answerReason({ role: 'assistant', content: [{ type: 'text', text: 'hi' }], finish_reason: 'stop' }),
    ).toBeUndefined();
    expect(answerReason({ role: 'assistant', content: null, finish_reason: 'stop' })).toBeUndefined();
    // a member other than content sorting before finish_reason
    expect(answerReason({ role: 'assistant', content: 'hi', annotations: [], finish_reason: 'stop' })).toBeUndefined();
    // nothing after it: no comma to put it before
    expect(answerReason({ content: 'hi', finish_reason: 'stop' })).toBeUndefined();
  });
});
