import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../../src/json/json-value.js';
import { readAnswer } from '../../../src/replay/answer.js';
import { PayloadReader, UnreadableValue } from '../../../src/replay/payload-refs.js';
import { readRecordedPrompt } from '../../../src/replay/recorded-prompt.js';
import { MemoryPayloads } from '../../fixtures/replay/harness.js';

function reader(payloads: MemoryPayloads, budget: number | null = null): PayloadReader {
  return new PayloadReader(payloads.deps(), budget);
}

describe('reading a recorded answer', () => {
  it('reads a canonical answer: text, tool calls in order, finish reason', async () => {
    const a = await readAnswer(
      [
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }],
          finish_reason: 'tool_calls',
        },
      ],
      reader(new MemoryPayloads()),
    );
    expect(a).toEqual({
      text: 'Let me check.',
      toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }],
      finishReason: 'tool_calls',
      responseId: null,
      model: null,
      created: null,
    });
  });

  it('folds several assistant messages into one answer: text concatenated, tool calls in order, last finish reason', async () => {
    const a = await readAnswer(
      [
        { role: 'assistant', content: 'One. ', tool_calls: [{ name: 'a' }] },
        {
          role: 'assistant',
          content: 'Two.',
          tool_calls: [{ id: 'b1', name: 'b', arguments: '{"x": 1}' }],
          finish_reason: 'tool_use',
        },
      ],
      reader(new MemoryPayloads()),
    );
    expect(a).toMatchObject({
      text: 'One. Two.',
      toolCalls: [
        { id: null, name: 'a', arguments: undefined },
        { id: 'b1', name: 'b', arguments: '{"x": 1}' }, // served as recorded
      ],
      finishReason: 'tool_calls',
    });
  });

  it('reads OTel parts messages', async () => {
    const a = await readAnswer(
      [
        {
          role: 'assistant',
          finish_reason: 'tool_call',
          parts: [
            { type: 'text', content: 'Checking.' },
            { type: 'tool_call', id: 't1', name: 'get_weather', arguments: { city: 'Lyon' } },
          ],
        },
      ],
      reader(new MemoryPayloads()),
    );
    expect(a).toMatchObject({
      text: 'Checking.',
      toolCalls: [{ id: 't1', name: 'get_weather', arguments: { city: 'Lyon' } }],
      finishReason: 'tool_calls',
    });
  });

  it('serves the text of an answer the normalizer kept with its reasoning (content parts: reasoning, then text)', async () => {
    const a = await readAnswer(
      [
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Paris first.' },
            { type: 'text', text: 'It is 18C.' },
          ],
          finish_reason: 'stop',
        },
      ],
      reader(new MemoryPayloads()),
    );
    expect(a).toMatchObject({ text: 'It is 18C.', toolCalls: [], finishReason: 'stop' });
  });

  it('reads a provider body (OpenAI or Anthropic) with its id, model and created time', async () => {
    const openai = await readAnswer(
      {
        id: 'chatcmpl-1',
        created: 1700000000,
        model: 'gpt-4o',
        choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }],
      },
      reader(new MemoryPayloads()),
    );
    expect(openai).toEqual({
      text: 'hi',
      toolCalls: [],
      finishReason: 'stop',
      responseId: 'chatcmpl-1',
      model: 'gpt-4o',
      created: 1700000000,
    });
    const anthropic = await readAnswer(
      {
        id: 'msg_1',
        type: 'message',
        model: 'claude',
        content: [{ type: 'tool_use', id: 'tu', name: 'f', input: {} }],
        stop_reason: 'tool_use',
      },
      reader(new MemoryPayloads()),
    );
    expect(anthropic).toMatchObject({
      text: null,
      toolCalls: [{ id: 'tu', name: 'f', arguments: {} }],
      finishReason: 'tool_calls',
      responseId: 'msg_1',
      model: 'claude',
    });
  });

  it('treats a recorded response id or model over 256 bytes as absent', async () => {
    const a = await readAnswer(
      { id: 'x'.repeat(257), model: 'm'.repeat(300), choices: [{ message: { content: 'hi' } }] },
      reader(new MemoryPayloads()),
    );
    expect(a).toMatchObject({ responseId: null, model: null });
  });

  it('serves an answer recorded as text byte for byte, inline or offloaded, even when it reads as JSON', async () => {
    const payloads = new MemoryPayloads();
    const text = '{"content": "hi",  "count": 2, "count": 3}';
    // inline: the answer message's content, or the whole response as text
    expect((await readAnswer([{ role: 'assistant', content: text }], reader(payloads)))!.text).toBe(text);
    expect((await readAnswer(text, reader(payloads)))!.text).toBe(text);
    // content merely shaped like a reference is recorded content: served as such, nothing read
    const named = payloads.putText(text);
    const contentRef = { $payload: named } as unknown as JsonValue;
    expect((await readAnswer([{ role: 'assistant', content: contentRef }], reader(payloads)))!.text).toBe(
      JSON.stringify({ $payload: named }),
    );
    // an offloaded whole response that is JSON but neither a provider body nor a message: its own text
    const bare = '{"score": 1.50,  "score": 2}';
    expect((await readAnswer({ $payload: payloads.putText(bare) }, reader(payloads)))!.text).toBe(bare);
    // content read as JSON from text is written back compactly, whatever it holds
    expect((await readAnswer([{ role: 'assistant', content: [{ type: 'x', n: 1 }] }], reader(payloads)))!.text).toBe(
      '[{"type":"x","n":1}]',
    );
    // an offloaded whole response holding a JSON string literal stands for that string
    expect((await readAnswer({ $payload: payloads.putText('"quoted"') }, reader(payloads)))!.text).toBe('quoted');
  });

  it('reads an offloaded message list as messages', async () => {
    const payloads = new MemoryPayloads();
    const ref = payloads.put([{ role: 'assistant', content: 'from a payload', finish_reason: 'stop' }]);
    expect(await readAnswer(ref, reader(payloads))).toMatchObject({ text: 'from a payload', finishReason: 'stop' });
  });

  it('is null when no answer was recorded', async () => {
    expect(await readAnswer(null, reader(new MemoryPayloads()))).toBeNull();
    expect(await readAnswer([], reader(new MemoryPayloads()))).toBeNull();
  });

  it('throws UnreadableValue saying why an offloaded answer cannot be read', async () => {
    const payloads = new MemoryPayloads();
    const erased = payloads.put([{ role: 'assistant', content: 'gone' }]);
    payloads.remove(erased.$payload, 'erased');
    await expect(readAnswer(erased, reader(payloads))).rejects.toMatchObject({ why: 'erased' });
    const big = payloads.put([{ role: 'assistant', content: 'x'.repeat(100) }]);
    const err = await readAnswer(big, reader(payloads, 50)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreadableValue);
    expect((err as UnreadableValue).message).toMatch(/past --tape-max-bytes/);
  });
});

describe('reading a recorded prompt', () => {
  it('combines a system message recorded beside an offloaded message list, as it would have been inline', async () => {
    const payloads = new MemoryPayloads();
    const ref = payloads.put([{ role: 'user', parts: [{ type: 'text', content: 'hello' }] }]);
    const prompt = await readRecordedPrompt([{ role: 'system', content: 'be brief' }, ref], reader(payloads));
    expect(prompt).toEqual({
      kind: 'messages',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
    });
  });

  it('refuses to compare a bare prompt: text, a JSON object even one that reads like a message, or a non-message element', async () => {
    const payloads = new MemoryPayloads();
    const r = reader(payloads);
    expect(await readRecordedPrompt('hello', r)).toMatchObject({
      kind: 'not_messages',
      why: expect.stringMatching(/bare text/),
    });
    expect(await readRecordedPrompt({ model: 'x', messages: [] }, r)).toMatchObject({
      kind: 'not_messages',
      why: expect.stringMatching(/JSON object/),
    });
    expect(await readRecordedPrompt(payloads.put({ role: 'user', content: 'hi' }), r)).toMatchObject({
      kind: 'not_messages',
      why: expect.stringMatching(/offloaded/),
    });
    expect(await readRecordedPrompt([{ role: 'system', content: 's' }, payloads.put('bare text')], r)).toMatchObject({
      kind: 'not_messages',
    });
    expect(await readRecordedPrompt([{ role: 'user', content: 'hi' }, { foo: 1 }], r)).toMatchObject({
      kind: 'not_messages',
      why: expect.stringMatching(/element 1/),
    });
    expect(await readRecordedPrompt(null, r)).toMatchObject({
      kind: 'not_messages',
      why: expect.stringMatching(/not recorded/),
    });
  });
});
