import { describe, expect, it } from 'vitest';
import { stepHasRuns, termsToCheck } from '../../../src/recall/match.js';
import { recordedTexts, searchWords } from '../../../src/recall/recorded-text.js';
import { hashLexemes } from './tokenize-reference.js';
import { queryTerms } from '../../../src/recall/tokenize.js';

const runsOf = (q: string) => termsToCheck(queryTerms(q));
const tool = (request: unknown, response: unknown = null) => ({
  name: 'lookup',
  tool: 'lookup',
  request: request as never,
  response: response as never,
});

describe('recordedTexts', () => {
  it('reads message content, tool call names and arguments, and the step names', () => {
    const step = {
      name: 'chat gpt-4o',
      tool: null,
      request: [
        { role: 'system', content: 'You are a weather assistant.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      ],
      response: [
        {
          role: 'assistant',
          finish_reason: 'tool_calls',
          tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris', days: 3 } }],
        },
      ],
    };
    expect(recordedTexts(step)).toEqual([
      'chat gpt-4o',
      'You are a weather assistant.',
      'Weather in Paris?',
      'get_weather',
      'Paris',
      '3',
    ]);
  });

  it('leaves out roles, ids, finish reasons, object keys and unresolved payload references', () => {
    const words = searchWords(
      tool({ city: 'Lyon', ok: true, ref: { $payload: `sha256/${'a'.repeat(64)}` } }, { celsius: 12 }),
    );
    expect(words).toEqual(hashLexemes(['lookup', 'lyon', '12']));
    const llm = searchWords({
      name: 'n',
      tool: null,
      request: [{ role: 'user', content: 'hi' }],
      response: [{ role: 'assistant', content: 'yo', finish_reason: 'stop' }],
    });
    expect(llm).toEqual(hashLexemes(['n', 'hi', 'yo']));
  });
});

describe('stepHasRuns', () => {
  it('finds a run of characters inside a longer run, in order', () => {
    expect(stepHasRuns(tool('明天北京天气预报说有雨'), runsOf('天气预报'))).toBe(true);
    expect(stepHasRuns(tool({ q: '明天北京天气预报说有雨' }), runsOf('北京天气 有雨'))).toBe(true); // 有雨 is a pair: the index settles it
    expect(stepHasRuns(tool({ q: '明天北京天气预报说有雨' }), runsOf('北京下雨'))).toBe(false);
    expect(stepHasRuns(tool({ q: '明天北京天气预报说有雨' }), runsOf('北京天气'))).toBe(true);
  });

  it('refuses the run when its pairs are present but apart', () => {
    expect(stepHasRuns(tool('天气很好，气预报'), runsOf('天气预报'))).toBe(false);
    expect(stepHasRuns(tool(['天气', '预报']), runsOf('天气预报'))).toBe(false);
    expect(stepHasRuns(tool('天气 预报'), runsOf('天气预报'))).toBe(false);
  });

  it('handles repeated characters at the start of a run', () => {
    expect(stepHasRuns(tool('天天天气'), runsOf('天天气'))).toBe(true);
    expect(stepHasRuns(tool('ああいう'), runsOf('あいう'))).toBe(true);
  });

  it('needs every run, each anywhere in the step', () => {
    const step = tool('北京天气预报', '上海明天下雨');
    expect(stepHasRuns(step, runsOf('天气预报 明天下'))).toBe(true);
    expect(stepHasRuns(step, runsOf('天气预报 明天下雪'))).toBe(false);
  });
});
