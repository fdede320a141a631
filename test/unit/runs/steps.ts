/** Test helper: tapes built by hand, one step at a time. */
import type { Message, Step, Tape } from '../../../src/normalize/step.js';
import type { JsonValue } from '../../../src/json/json-value.js';

let spanCounter = 0;

export function step(kind: Step['kind'], fields: Partial<Step> = {}): Step {
  const span = (++spanCounter).toString(16).padStart(16, '0');
  return {
    index: 0,
    kind,
    name: kind === 'llm' ? 'chat gpt-4o-mini' : kind === 'tool' ? 'get_weather' : 'agent',
    model: kind === 'llm' ? 'gpt-4o-mini' : null,
    tool: kind === 'tool' ? 'get_weather' : null,
    service: 'test',
    trace_id: '0'.repeat(32),
    span_id: span,
    parent_span_id: null,
    start_ns: 0n,
    duration_ns: 1_000_000n,
    status: 'ok',
    request: null,
    response: null,
    request_digest: null,
    response_digest: null,
    fingerprint: `${kind}:x#0`,
    tokens: { input: null, output: null, cache_read: null, cache_write: null, context: null },
    params: {},
    layout: 'otel-genai',
    cost_usd: null,
    ...fields,
  };
}

export const llm = (request: Message[] | null, response: Message[] | null, fields: Partial<Step> = {}) =>
  step('llm', { request: request as unknown as JsonValue, response: response as unknown as JsonValue, ...fields });

export const tool = (name: string, args: JsonValue | null, result: JsonValue | null, fields: Partial<Step> = {}) =>
  step('tool', { name, tool: name, request: args, response: result, ...fields });

/** A tape of these steps in this order, numbered, starting 10 ms apart. */
export function tape(steps: Step[], fields: Partial<Tape> = {}): Tape {
  return {
    run: 'run-1',
    tenant: null,
    spans_examined: steps.length,
    truncated: false,
    steps: steps.map((s, index) => ({ ...s, index, start_ns: BigInt(index) * 10_000_000n })),
    ...fields,
  };
}

export const SYSTEM: Message = { role: 'system', content: 'Be brief.' };
export const USER: Message = { role: 'user', content: 'Weather in Paris?' };
export const callWeather = (id: string | undefined, city = 'Paris'): Message => ({
  role: 'assistant',
  tool_calls: [{ ...(id ? { id } : {}), name: 'get_weather', arguments: { city } }],
  finish_reason: 'tool_calls',
});
export const answer = (content: string): Message => ({ role: 'assistant', content, finish_reason: 'stop' });
export const toolResult = (id: string | undefined, content: JsonValue): Message => ({
  role: 'tool',
  ...(id ? { tool_call_id: id } : {}),
  content,
});
