import { describe, expect, it } from 'vitest';
import { comparableDigest as digestOf, comparableForm } from '../../../src/normalize/comparable.js';
import type { Message } from '../../../src/normalize/step.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { messagesFromRequestBody } from '../../../src/normalize/provider-messages.js';
import { normalizeMessages } from '../../../src/replay/canonical-messages.js';
import { readAnthropicRequest, readOpenAiRequest } from '../../../src/replay/request-shapes.js';
import { loadFixture } from '../../fixtures/replay/harness.js';

const SYSTEM = 'You are a concise weather assistant.';
const RESULT = '{"city":"Paris","temperature_c":18}';

/**
 * The conversation every spelling below says, canonically (docs/architecture.md "Messages"),
 * compared as digests compare it: each spelling keeps its own recorded text (the arguments
 * as OpenAI's text or Anthropic's object), which reads as this.
 */
const canonical: Message[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: "What's the weather in Paris?" },
  {
    role: 'assistant',
    content: 'Let me check.',
    tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: { city: 'Paris', temperature_c: 18 } },
];

const digest = (m: Message[]) => digestOf(m as unknown as JsonValue);
const read = (m: Message[]) => comparableForm(m as unknown as JsonValue);

describe('canonical request messages', () => {
  it('reads an OpenAI chat request into the canonical shape: tool_calls unwrapped, arguments and JSON-shaped tool results parsed', () => {
    const req = readOpenAiRequest({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: [{ type: 'text', text: "What's the weather in Paris?" }] },
        {
          role: 'assistant',
          content: 'Let me check.',
          refusal: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: RESULT },
      ],
    });
    expect(read(req.messages)).toEqual(canonical);
    expect(req.messages[2].tool_calls?.[0].arguments).toBe('{"city": "Paris"}'); // as the agent sent it
    expect(req.messages[3].content).toBe(RESULT);
  });

  it('reads an Anthropic messages request into the same shape: system param first, tool_use as tool_calls, tool_result as tool messages', () => {
    const req = readAnthropicRequest({
      model: 'claude',
      max_tokens: 100,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: "What's the weather in Paris?" },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: RESULT }] }],
        },
      ],
    });
    expect(read(req.messages)).toEqual(canonical);
    expect(digest(req.messages)).toBe(digest(canonical));
  });

  it('reads OTel GenAI parts messages into the same shape', () => {
    const result = normalizeMessages([
      { role: 'system', parts: [{ type: 'text', content: SYSTEM }] },
      { role: 'user', parts: [{ type: 'text', content: "What's the weather in Paris?" }] },
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Let me check.' },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } },
        ],
      },
      { role: 'user', parts: [{ type: 'tool_call_response', id: 'call_1', response: RESULT }] },
    ]);
    expect(result.ok && read(result.messages)).toEqual(canonical);
  });

  it("leaves canonical messages as they are, so a tape's own request digests to its request_digest", () => {
    expect(normalizeMessages(canonical)).toEqual({ ok: true, messages: canonical });
    for (const name of ['openllmetry-openai--weather', 'openllmetry-anthropic--multi-tool'] as const) {
      for (const step of loadFixture(name).tape.steps.filter((s) => s.kind === 'llm')) {
        const again = normalizeMessages(step.request as JsonValue[]);
        expect(again.ok && digest(again.messages)).toBe(step.request_digest);
      }
    }
  });

  it("digests the recorded SDK requests of a run to the recorded steps' request digests, for both providers", () => {
    for (const name of [
      'openllmetry-openai--weather',
      'otel-genai-openai--multi-tool',
      'openinference-anthropic--weather',
      'openllmetry-anthropic--multi-tool',
    ] as const) {
      const f = loadFixture(name);
      for (const call of f.calls) {
        const req = f.sdk === 'openai' ? readOpenAiRequest(call.request) : readAnthropicRequest(call.request);
        expect(digest(req.messages)).toBe(f.tape.steps.find((s) => s.index === call.step)!.request_digest);
      }
    }
  });

  it('treats empty content as missing content and a developer message as a system message', () => {
    const req = readOpenAiRequest({
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'assistant', content: '', tool_calls: [] },
        { role: 'user', content: [] },
      ],
    });
    expect(req.messages).toEqual([{ role: 'system', content: 'be brief' }, { role: 'assistant' }, { role: 'user' }]);
    expect(readAnthropicRequest({ system: '', messages: [] }).messages).toEqual([]);
  });

  it('keeps text that only looks like a JSON string literal as text', () => {
    const req = readOpenAiRequest({
      messages: [
        { role: 'user', content: '"Where is the station?"' },
        { role: 'user', content: '{not json' },
      ],
    });
    expect(req.messages.map((m) => m.content)).toEqual(['"Where is the station?"', '{not json']);
  });

  it('joins several text parts with nothing between them, as the normalizer does (whichever provider spelled them)', () => {
    const openai = readOpenAiRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ],
    });
    const anthropic = readAnthropicRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'b' },
          ],
        },
      ],
    });
    expect(openai.messages).toEqual([{ role: 'user', content: 'ab' }]);
    expect(anthropic.messages).toEqual(openai.messages);
  });

  it('splits a user message holding tool results and text into tool messages then the text, in place', () => {
    const req = readAnthropicRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'a', content: 'one' },
            { type: 'tool_result', tool_use_id: 'b', content: 'two' },
            { type: 'text', text: 'and now?' },
          ],
        },
      ],
    });
    expect(req.messages).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'one' },
      { role: 'tool', tool_call_id: 'b', content: 'two' },
      { role: 'user', content: 'and now?' },
    ]);
  });

  it('refuses a list element that is not a message, naming its index', () => {
    expect(normalizeMessages([{ role: 'user', content: 'hi' }, { foo: 1 }])).toEqual({ ok: false, index: 1 });
    expect(() => readOpenAiRequest({ messages: [42] })).toThrow(/messages\[0\] is not a message/);
    expect(() => readOpenAiRequest({ prompt: 'hi' })).toThrow(/no "messages" array/);
  });

  it('reads the stream flags and treats a model name over 256 bytes as absent', () => {
    const req = readOpenAiRequest({
      model: 'x'.repeat(257),
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(req).toMatchObject({ model: null, stream: true, includeUsage: true });
    expect(readAnthropicRequest({ model: 'claude', messages: [], stream: true })).toMatchObject({
      model: 'claude',
      stream: true,
      includeUsage: false,
    });
  });
});

/**
 * The agent's request is read by the normalizer's own provider reader (one implementation of
 * "provider request body → canonical messages"), so it folds exactly as recorded spans did.
 * Each case below is one place an earlier replay-local reader parted from the normalizer.
 */
describe("requests read by the normalizer's rules", () => {
  const openai = (messages: unknown[]) => ({ model: 'gpt-4o', messages });
  const anthropic = (messages: unknown[], system?: unknown) => ({
    model: 'claude',
    max_tokens: 10,
    messages,
    ...(system === undefined ? {} : { system }),
  });

  it("is the normalizer's reading of the same body, for both wires", () => {
    const bodies = [
      openai([
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'narrator', content: 'x' },
      ]),
      openai([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '7' } }],
        },
      ]),
      anthropic(
        [
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 's' },
              { type: 'text', text: 'ok' },
            ],
          },
        ],
        [{ type: 'text', text: 'sys' }],
      ),
    ];
    for (const body of bodies) {
      const read = 'max_tokens' in body ? readAnthropicRequest(body) : readOpenAiRequest(body);
      expect(read.messages).toEqual(messagesFromRequestBody(body));
    }
  });

  it('folds image parts to the canonical part shape, so an OpenAI image_url and an Anthropic url image compare equal', () => {
    const url = 'https://example.com/paris.png';
    const o = readOpenAiRequest(
      openai([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Where?' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ]),
    );
    // OpenAI's detail is kept: it changes what the model sees
    const detailed = readOpenAiRequest(
      openai([{ role: 'user', content: [{ type: 'image_url', image_url: { url, detail: 'high' } }] }]),
    );
    expect(detailed.messages).toEqual([{ role: 'user', content: [{ type: 'image', url, detail: 'high' }] }]);
    const a = readAnthropicRequest(
      anthropic([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Where?' },
            { type: 'image', source: { type: 'url', url } },
          ],
        },
      ]),
    );
    expect(o.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Where?' },
          { type: 'image', url },
        ],
      },
    ]);
    expect(digest(a.messages)).toBe(digest(o.messages));
    const b64 = readAnthropicRequest(
      anthropic([
        {
          role: 'user',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } }],
        },
      ]),
    );
    expect(b64.messages).toEqual([
      { role: 'user', content: [{ type: 'image', mime_type: 'image/png', data: 'iVBOR' }] },
    ]);
  });

  it('keeps reasoning parts (Anthropic thinking) as the normalizer does', () => {
    const a = readAnthropicRequest(
      anthropic([
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Paris first.', signature: 'sig' },
            { type: 'text', text: 'Checking.' },
          ],
        },
      ]),
    );
    expect(a.messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Paris first.' },
          { type: 'text', text: 'Checking.' },
        ],
      },
    ]);
  });

  it('keeps tool arguments as the recorded text, whether or not it parses; empty arguments are {}', () => {
    const call = (args: string) => ({ id: 'c', type: 'function', function: { name: 'f', arguments: args } });
    const o = readOpenAiRequest(
      openai([
        {
          role: 'assistant',
          tool_calls: [call('42'), call('"Paris"'), call('not json'), call(''), call('{"a": [1, 2]}')],
        },
      ]),
    );
    expect(o.messages[0].tool_calls).toEqual([
      { id: 'c', name: 'f', arguments: '42' },
      { id: 'c', name: 'f', arguments: '"Paris"' },
      { id: 'c', name: 'f', arguments: 'not json' },
      { id: 'c', name: 'f', arguments: {} },
      { id: 'c', name: 'f', arguments: '{"a": [1, 2]}' },
    ]);
    expect(read(o.messages)).toEqual([
      {
        role: 'assistant',
        tool_calls: [
          { id: 'c', name: 'f', arguments: '42' },
          { id: 'c', name: 'f', arguments: '"Paris"' },
          { id: 'c', name: 'f', arguments: 'not json' },
          { id: 'c', name: 'f', arguments: {} },
          { id: 'c', name: 'f', arguments: { a: [1, 2] } },
        ],
      },
    ]);
  });

  it('keeps an unknown role as recorded, not as a user turn', () => {
    expect(readOpenAiRequest(openai([{ role: 'narrator', content: 'Once upon a time.' }])).messages).toEqual([
      { role: 'narrator', content: 'Once upon a time.' },
    ]);
  });

  it('takes a recorded canonical message as it is, so JSON text from a tool result is not folded', () => {
    // a tool that returned JSON holding objects with a "type" key (GeoJSON, search results, ...)
    const result = '[{"type":"text","text":"18C"},{"type":"Feature","note":null}]';
    const recorded: Message[] = [{ role: 'tool', tool_call_id: 'c1', content: result }];
    expect(normalizeMessages(recorded)).toEqual({ ok: true, messages: recorded });
    const agent = readOpenAiRequest(openai([{ role: 'tool', tool_call_id: 'c1', content: result }]));
    expect(digest(agent.messages)).toBe(digest(recorded));
  });

  it("still reads a recorded element in another spelling (OpenAI-shaped) by the normalizer's reader", () => {
    const result = normalizeMessages([
      {
        role: 'developer',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
      },
      { role: 'assistant', content: 'done', finish_reason: 'stop' },
    ]);
    expect(result).toEqual({
      ok: true,
      messages: [
        { role: 'system', content: 'ab' },
        { role: 'assistant', tool_calls: [{ id: 'c', name: 'f', arguments: '{"x":1}' }] },
        { role: 'assistant', content: 'done' },
      ],
    });
  });
});
