import { describe, expect, it } from 'vitest';
import { checkChatOrder, toChatMessages, type ChatMessage } from '../../../src/runs/chat-format.js';
import { conversationOf } from '../../../src/runs/conversation.js';
import { reconstructRun } from '../../../src/runs/reconstruct.js';
import type { Message } from '../../../src/normalize/step.js';
import { answer, callWeather, llm, tape, tool, toolResult, SYSTEM, USER } from './steps.js';

const PARIS = { city: 'Paris', temperature_c: 18 };

describe('toChatMessages', () => {
  it('writes OpenAI chat format: tool calls with JSON-string arguments, tool results as strings', () => {
    const out = toChatMessages([SYSTEM, USER, callWeather('c1'), toolResult('c1', PARIS), answer('Sunny.')]);
    expect(out).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"city":"Paris","temperature_c":18}' },
        { role: 'assistant', content: 'Sunny.' },
      ],
    });
  });

  it('gives id-less tool calls deterministic ids that their results reference, avoiding ids in use', () => {
    const conversation: Message[] = [
      USER,
      {
        role: 'assistant',
        tool_calls: [
          { name: 'a', arguments: {} },
          { id: 'call_1', name: 'b', arguments: {} },
          { name: 'c', arguments: {} },
        ],
      },
      toolResult(undefined, 'ra'),
      toolResult('call_1', 'rb'),
      toolResult(undefined, 'rc'),
      answer('done'),
    ];
    const first = toChatMessages(conversation);
    expect(first).toEqual(toChatMessages(conversation));
    const msgs = (first as { messages: ChatMessage[] }).messages;
    const calls = (msgs[1] as { tool_calls: { id: string }[] }).tool_calls.map((c) => c.id);
    expect(calls).toEqual(['call_2', 'call_1', 'call_3']);
    expect(msgs.slice(2, 5).map((m) => (m as { tool_call_id: string }).tool_call_id)).toEqual([
      'call_2',
      'call_1',
      'call_3',
    ]);
  });

  it('writes consecutive turns of one role as recorded, and joins user turns when asked', () => {
    const split: Message[] = [SYSTEM, USER, { role: 'user', content: 'In Celsius.' }, answer('18 °C.')];
    expect(toChatMessages(split)).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'user', content: 'In Celsius.' },
        { role: 'assistant', content: '18 °C.' },
      ],
    });
    expect(toChatMessages(split, { mergeUserTurns: true })).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?\n\nIn Celsius.' },
        { role: 'assistant', content: '18 °C.' },
      ],
    });
    // a follow-up before the answer, then two answers in a row
    const followUp: Message[] = [USER, answer('Looking.'), answer('18 °C.'), { role: 'user', content: 'Thanks.' }];
    expect(toChatMessages([...followUp, answer('You are welcome.')])).toMatchObject({
      messages: [
        { role: 'user' },
        { role: 'assistant' },
        { role: 'assistant' },
        { role: 'user' },
        { role: 'assistant' },
      ],
    });
  });

  it('refuses conversations no trainer accepts, saying why', () => {
    expect(toChatMessages([answer('a')])).toEqual({ invalid: 'the conversation does not start with a user turn' });
    expect(toChatMessages([USER, callWeather('c1'), answer('x')])).toEqual({
      invalid: 'tool calls "c1" have no result',
    });
    expect(toChatMessages([USER, toolResult('x', 'r'), answer('a')])).toMatchObject({
      invalid: expect.stringContaining('tool result'),
    });
    expect(toChatMessages([USER, callWeather('c1'), toolResult('c1', 'r')])).toEqual({
      invalid: 'the conversation does not end with an assistant answer',
    });
  });

  it('checkChatOrder accepts user turns after tool results and several system messages first', () => {
    const ok: ChatMessage[] = [
      { role: 'system', content: 's1' },
      { role: 'system', content: 's2' },
      { role: 'user', content: 'u' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'x', content: 'r' },
      { role: 'assistant', content: 'a' },
    ];
    expect(checkChatOrder(ok)).toBeNull();
  });
});

describe('conversationOf', () => {
  it('takes the last model call as the model saw it, plus its answer', () => {
    const t = tape([
      llm([SYSTEM, USER], [callWeather('c1')]),
      tool('get_weather', { city: 'Paris' }, PARIS),
      llm(
        [
          SYSTEM,
          USER,
          { role: 'assistant', tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }] },
          toolResult('c1', 'as sent'),
        ],
        [answer('Sunny.')],
      ),
    ]);
    const c = conversationOf(t, reconstructRun(t));
    expect(c).toEqual({
      messages: [
        SYSTEM,
        USER,
        { role: 'assistant', tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }] },
        toolResult('c1', 'as sent'),
        { role: 'assistant', content: 'Sunny.' },
      ],
    });
  });

  it('rebuilds the turns when later calls send only the new messages', () => {
    const t = tape([
      llm([SYSTEM, USER], [callWeather('c1')]),
      tool('get_weather', { city: 'Paris' }, PARIS),
      llm([toolResult('c1', PARIS)], [answer('Sunny.')]),
    ]);
    const c = conversationOf(t, reconstructRun(t));
    expect(c).toEqual({
      messages: [
        SYSTEM,
        USER,
        { role: 'assistant', tool_calls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }] },
        toolResult('c1', PARIS),
        { role: 'assistant', content: 'Sunny.' },
      ],
    });
  });

  it('keeps the user turns a later call was sent when rebuilding, and the prompt once', () => {
    const followUp: Message = { role: 'user', content: 'And tomorrow?' };
    const t = tape([
      llm([SYSTEM, USER], [answer('Sunny.')]),
      llm([followUp], [answer('Rain.')]),
      llm([SYSTEM, USER], [answer('Still sunny.')]),
    ]);
    expect(conversationOf(t, reconstructRun(t))).toEqual({
      messages: [
        SYSTEM,
        USER,
        { role: 'assistant', content: 'Sunny.' },
        followUp,
        { role: 'assistant', content: 'Rain.' },
        { role: 'assistant', content: 'Still sunny.' },
      ],
    });
  });

  it('names the gap when there is no prompt or no answer', () => {
    const noInput = tape([llm(null, null)]);
    expect(conversationOf(noInput, reconstructRun(noInput))).toEqual({ gap: 'no_input' });
    const noAnswer = tape([llm([USER], [callWeather('c')])]);
    expect(conversationOf(noAnswer, reconstructRun(noAnswer))).toEqual({ gap: 'no_output' });
  });
});
