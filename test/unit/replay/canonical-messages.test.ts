import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/json/canonical.js';
import type { JsonValue, Message } from '../../../src/normalize/step.js';
import { normalizeMessages } from '../../../src/replay/canonical-messages.js';
import { readAnthropicRequest, readOpenAiRequest } from '../../../src/replay/request-shapes.js';
import { loadFixture } from '../../fixtures/replay/harness.js';

const SYSTEM = 'You are a concise weather assistant.';
const RESULT = '{"city":"Paris","temperature_c":18}';

/** The conversation every spelling below says, canonically (DESIGN.md "Canonical shapes"). */
const canonical: Message[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: "What's the weather in Paris?" },
  { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: { city: 'Paris', temperature_c: 18 } },
];

const digest = (m: Message[]) => digestOf(m as unknown as JsonValue);

describe('canonical request messages', () => {
  it('reads an OpenAI chat request into the canonical shape: tool_calls unwrapped, arguments and JSON-shaped tool results parsed', () => {
    const req = readOpenAiRequest({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: [{ type: 'text', text: "What's the weather in Paris?" }] },
        { role: 'assistant', content: 'Let me check.', refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: RESULT },
      ],
    });
    expect(req.messages).toEqual(canonical);
  });

  it('reads an Anthropic messages request into the same shape: system param first, tool_use as tool_calls, tool_result as tool messages', () => {
    const req = readAnthropicRequest({
      model: 'claude',
      max_tokens: 100,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: "What's the weather in Paris?" },
        { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: RESULT }] }] },
      ],
    });
    expect(req.messages).toEqual(canonical);
    expect(digest(req.messages)).toBe(digest(canonical));
  });

  it('reads OTel GenAI parts messages into the same shape', () => {
    const result = normalizeMessages([
      { role: 'system', parts: [{ type: 'text', content: SYSTEM }] },
      { role: 'user', parts: [{ type: 'text', content: "What's the weather in Paris?" }] },
      { role: 'assistant', parts: [{ type: 'text', content: 'Let me check.' }, { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'user', parts: [{ type: 'tool_call_response', id: 'call_1', response: RESULT }] },
    ]);
    expect(result).toEqual({ ok: true, messages: canonical });
  });

  it('leaves canonical messages as they are, so a tape\'s own request digests to its request_digest', () => {
    expect(normalizeMessages(canonical)).toEqual({ ok: true, messages: canonical });
    for (const name of ['openllmetry-openai--weather', 'openllmetry-anthropic--multi-tool'] as const) {
      for (const step of loadFixture(name).tape.steps.filter((s) => s.kind === 'llm')) {
        const again = normalizeMessages(step.request as JsonValue[]);
        expect(again.ok && digest(again.messages)).toBe(step.request_digest);
      }
    }
  });

  it('digests the recorded SDK requests of a run to the recorded steps\' request digests, for both providers', () => {
    for (const name of ['openllmetry-openai--weather', 'otel-genai-openai--multi-tool', 'openinference-anthropic--weather', 'openllmetry-anthropic--multi-tool'] as const) {
      const f = loadFixture(name);
      for (const call of f.calls) {
        const req = f.sdk === 'openai' ? readOpenAiRequest(call.request) : readAnthropicRequest(call.request);
        expect(digest(req.messages)).toBe(f.tape.steps.find((s) => s.index === call.step)!.request_digest);
      }
    }
  });

  it('treats empty content as missing content and a developer message as a system message', () => {
    const req = readOpenAiRequest({ messages: [{ role: 'developer', content: 'be brief' }, { role: 'assistant', content: '', tool_calls: [] }, { role: 'user', content: [] }] });
    expect(req.messages).toEqual([{ role: 'system', content: 'be brief' }, { role: 'assistant' }, { role: 'user' }]);
    expect(readAnthropicRequest({ system: '', messages: [] }).messages).toEqual([]);
  });

  it('keeps text that only looks like a JSON string literal as text', () => {
    const req = readOpenAiRequest({ messages: [{ role: 'user', content: '"Where is the station?"' }, { role: 'user', content: '{not json' }] });
    expect(req.messages.map((m) => m.content)).toEqual(['"Where is the station?"', '{not json']);
  });

  it('keeps several content parts as a list of parts, text parts in one spelling', () => {
    const openai = readOpenAiRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }] });
    const anthropic = readAnthropicRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'b' }] }] });
    expect(openai.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }]);
    expect(anthropic.messages).toEqual(openai.messages);
  });

  it('splits a user message holding tool results and text into tool messages then the text, in place', () => {
    const req = readAnthropicRequest({
      messages: [{ role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'one' },
        { type: 'tool_result', tool_use_id: 'b', content: 'two' },
        { type: 'text', text: 'and now?' },
      ] }],
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
    const req = readOpenAiRequest({ model: 'x'.repeat(257), messages: [], stream: true, stream_options: { include_usage: true } });
    expect(req).toMatchObject({ model: null, stream: true, includeUsage: true });
    expect(readAnthropicRequest({ model: 'claude', messages: [], stream: true })).toMatchObject({ model: 'claude', stream: true, includeUsage: false });
  });
});
