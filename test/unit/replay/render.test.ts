import { describe, expect, it } from 'vitest';
import { renderJson } from '../../../src/json/canonical.js';
import type { Answer } from '../../../src/replay/answer.js';
import { renderAnthropic } from '../../../src/replay/render-anthropic.js';
import { type RenderInput, TooLarge } from '../../../src/replay/render-common.js';
import { renderOpenAi } from '../../../src/replay/render-openai.js';

const toolAnswer: Answer = {
  text: null,
  toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } }],
  finishReason: 'tool_calls',
  responseId: null,
  model: null,
  created: null,
};
const textAnswer: Answer = {
  ...toolAnswer,
  text: "It's raining in Paris, 12°C. Take an umbrella.",
  toolCalls: [],
  finishReason: 'stop',
};

function input(over: Partial<RenderInput> = {}): RenderInput {
  return {
    replayId: 'rp_ac879985abef9cba12bb342bdc3b8bd1',
    step: 0,
    answer: toolAnswer,
    tokens: { input: 82, output: 17, cache_read: null, cache_write: null, context: 82 },
    stepModel: 'gpt-4o-2024-08-06',
    startNs: 1791964800010000000n,
    requestModel: 'gpt-4o',
    stream: false,
    includeUsage: false,
    maxBytes: 64 * 1024 * 1024,
    ...over,
  };
}

const body = (r: { body: Buffer }) => r.body.toString('utf8');
const events = (text: string) => text.split('\n\n').filter(Boolean);

describe('the OpenAI rendering', () => {
  it("is a ChatCompletion with the recording's model, created time, tool-call ids and usage, and an id made from the replay and step", () => {
    const r = renderOpenAi(input());
    expect(r.contentType).toBe('application/json');
    expect(body(r)).toBe(
      JSON.stringify({
        choices: [
          {
            finish_reason: 'tool_calls',
            index: 0,
            logprobs: null,
            message: {
              content: null,
              refusal: null,
              role: 'assistant',
              tool_calls: [
                { function: { arguments: '{"city":"Paris"}', name: 'get_weather' }, id: 'call_w1', type: 'function' },
              ],
            },
          },
        ],
        created: 1791964800,
        id: 'chatcmpl-tapedeckac879985abefs0',
        model: 'gpt-4o-2024-08-06',
        object: 'chat.completion',
        system_fingerprint: null,
        usage: { completion_tokens: 17, prompt_tokens: 82, total_tokens: 99 },
      }),
    );
  });

  it('streams chat.completion.chunk events: the role first, text re-chunked at whitespace, the finish, then [DONE]', () => {
    const r = renderOpenAi(input({ step: 2, answer: textAnswer, stream: true }));
    expect(r.contentType).toMatch(/^text\/event-stream/);
    const list = events(body(r));
    expect(list.at(-1)).toBe('data: [DONE]');
    const chunks = list.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      { content: '', refusal: null, role: 'assistant' },
      { content: "It's raining in " },
      { content: 'Paris, 12°C. ' },
      { content: 'Take an ' },
      { content: 'umbrella.' },
      {},
    ]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    for (const c of chunks)
      expect(c).toMatchObject({
        id: 'chatcmpl-tapedeckac879985abefs2',
        object: 'chat.completion.chunk',
        created: 1791964800,
        model: 'gpt-4o-2024-08-06',
      });
    expect(body(r)).not.toMatch(/^event:/m);
    for (const e of list.slice(0, -1)) expect(e).toBe(`data: ${renderJson(JSON.parse(e.slice(6)))}`); // sorted keys, compact
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
  });

  it('streams tool calls as an opening fragment then argument pieces, and a usage chunk last when include_usage is set', () => {
    const r = renderOpenAi(
      input({
        stream: true,
        includeUsage: true,
        answer: { ...toolAnswer, toolCalls: [{ id: null, name: 'f', arguments: { long: 'x'.repeat(40) } }] },
      }),
    );
    const chunks = events(body(r))
      .slice(0, -1)
      .map((e) => JSON.parse(e.replace(/^data: /, '')));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: 'call_tapedeckac879985abefs0c0',
      type: 'function',
      function: { name: 'f', arguments: '' },
    });
    expect(calls.slice(1).every((c: { id?: string; index: number }) => c.id === undefined && c.index === 0)).toBe(true);
    expect(calls.map((c: { function: { arguments: string } }) => c.function.arguments).join('')).toBe(
      `{"long":"${'x'.repeat(40)}"}`,
    );
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('writes a completion as renderJson writes its value, with and without tool calls and usage', () => {
    for (const answer of [textAnswer, toolAnswer])
      for (const tokens of [
        input().tokens,
        { input: null, output: null, cache_read: null, cache_write: null, context: null },
      ]) {
        const json = body(renderOpenAi(input({ answer, tokens })));
        expect(json).toBe(renderJson(JSON.parse(json)));
      }
  });

  it('writes every chunk as renderJson writes its value, with and without usage', () => {
    for (const includeUsage of [false, true]) {
      const r = renderOpenAi(
        input({
          stream: true,
          includeUsage,
          answer: {
            ...toolAnswer,
            text: 'Rain "all day"\nin Paris.',
            toolCalls: [...toolAnswer.toolCalls, { id: null, name: 'g', arguments: { q: 'é\t' } }],
          },
        }),
      );
      const data = events(body(r)).map((e) => e.replace(/^data: /, ''));
      expect(data.at(-1)).toBe('[DONE]');
      expect(data.length).toBeGreaterThan(6);
      for (const json of data.slice(0, -1)) expect(json).toBe(renderJson(JSON.parse(json)));
    }
  });

  it('passes cached and cache-write tokens through as prompt token details, and leaves usage out when none was recorded', () => {
    const cached = JSON.parse(
      body(renderOpenAi(input({ tokens: { input: 10, output: 2, cache_read: 4, cache_write: 3, context: null } }))),
    );
    expect(cached.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 3 },
    });
    const none = JSON.parse(
      body(
        renderOpenAi(
          input({ tokens: { input: null, output: null, cache_read: null, cache_write: null, context: null } }),
        ),
      ),
    );
    expect(none.usage).toBeUndefined();
  });

  it('takes the request\'s model when the recording has none, else "unknown"', () => {
    expect(JSON.parse(body(renderOpenAi(input({ stepModel: null })))).model).toBe('gpt-4o');
    expect(JSON.parse(body(renderOpenAi(input({ stepModel: null, requestModel: null })))).model).toBe('unknown');
  });

  it('refuses to render past the response bound', () => {
    expect(() => renderOpenAi(input({ maxBytes: 100 }))).toThrow(TooLarge);
    const plain = renderOpenAi(input()).body.byteLength;
    expect(() => renderOpenAi(input({ stream: true, maxBytes: plain + 1 }))).toThrow(TooLarge);
  });
});

describe('the Anthropic rendering', () => {
  it("is one Message: text block then tool_use blocks, stop reason in Anthropic's vocabulary, usage as recorded", () => {
    const r = renderAnthropic(
      input({
        answer: { ...toolAnswer, text: 'Checking.' },
        tokens: { input: 109, output: 43, cache_read: 0, cache_write: 0, context: 109 },
      }),
    );
    expect(JSON.parse(body(r))).toEqual({
      id: 'msg_tapedeckac879985abefs0',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-2024-08-06',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 109, output_tokens: 43, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(JSON.parse(body(renderAnthropic(input({ answer: textAnswer })))).stop_reason).toBe('end_turn');
    expect(
      JSON.parse(body(renderAnthropic(input({ answer: { ...textAnswer, finishReason: 'length' } })))).stop_reason,
    ).toBe('max_tokens');
  });

  it("gives Anthropic's input_tokens without the prompt-cache reads and writes, which a tape's input includes (OTel GenAI convention)", () => {
    // the provider said input_tokens 20, cache_read 70, cache_creation 10; the tape holds input 100
    const r = JSON.parse(
      body(
        renderAnthropic(
          input({
            answer: textAnswer,
            tokens: { input: 100, output: 5, cache_read: 70, cache_write: 10, context: 100 },
          }),
        ),
      ),
    );
    expect(r.usage).toEqual({
      input_tokens: 20,
      output_tokens: 5,
      cache_creation_input_tokens: 10,
      cache_read_input_tokens: 70,
    });
  });

  it('invents toolu_ ids for tool calls the recording left without one', () => {
    const r = JSON.parse(
      body(
        renderAnthropic(
          input({ answer: { ...toolAnswer, toolCalls: [{ id: null, name: 'f', arguments: undefined }] } }),
        ),
      ),
    );
    expect(r.content).toEqual([{ type: 'tool_use', id: 'toolu_tapedeckac879985abefs0c0', name: 'f', input: {} }]);
  });

  it('streams named events in order, with text_delta and input_json_delta pieces and the usage totals in message_delta', () => {
    const r = renderAnthropic(input({ stream: true, answer: { ...toolAnswer, text: 'Let me check the weather.' } }));
    const list = events(body(r)).map((e) => {
      const [name, data] = e.split('\n');
      const parsed = JSON.parse(data.replace(/^data: /, ''));
      expect(name).toBe(`event: ${parsed.type}`);
      return parsed;
    });
    expect(list.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(list[0].message).toMatchObject({
      content: [],
      stop_reason: null,
      usage: { input_tokens: 82, output_tokens: 0 },
    });
    expect(list[2].delta).toEqual({ type: 'text_delta', text: 'Let me check ' });
    expect(list[5]).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'call_w1', name: 'get_weather', input: {} },
    });
    expect(list[6].delta).toEqual({ type: 'input_json_delta', partial_json: '{"city":"Paris"}' });
    expect(list[8]).toMatchObject({
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 82, output_tokens: 17 },
    });
  });
});
