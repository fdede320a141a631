// A small real agent: the official OpenAI SDK in a tool loop. It asks the model, runs the
// tools the model asks for, sends their results back, and stops at the model's answer.
// Nothing here knows about replays: point the client's baseURL at one and it is replayed.

export const SYSTEM_PROMPT = 'You are a concise weather assistant. Use get_weather, then answer in one sentence.';
export const QUESTION = "What's the weather in Paris right now?";

export const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

/** The tool the agent runs itself: deterministic, so a replayed run asks what the recording asked. */
export function getWeather({ city }) {
  return { city, celsius: 18, sky: 'partly cloudy' };
}

/**
 * Runs the agent to its answer. `onModelCall(request, response, startMs, endMs)` is called after
 * each model call (the recording script traces them).
 */
export async function runWeatherAgent(client, { systemPrompt = SYSTEM_PROMPT, question = QUESTION, onModelCall } = {}) {
  const messages = [
    { role: 'system', content: systemPrompt },
    { role: 'user', content: question },
  ];
  for (let turn = 0; turn < 5; turn++) {
    const request = { model: 'gpt-4o-mini', messages: structuredClone(messages), tools: TOOLS };
    const startMs = Date.now();
    const response = await client.chat.completions.create(request);
    await onModelCall?.(request, response, startMs, Date.now());
    const message = response.choices[0].message;
    messages.push({ role: 'assistant', content: message.content, tool_calls: message.tool_calls });
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls) {
      const result = getWeather(JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  throw new Error('the agent did not answer within 5 model calls');
}
