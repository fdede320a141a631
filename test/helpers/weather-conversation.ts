/**
 * The conversation the live conformance tests run (test/conformance/live-*.test.ts): a user
 * asks for the weather, the model answers with a get_weather tool call, the app appends the
 * tool result, the model answers in text. Here: its constants, the canonical messages every
 * tape of it must hold, the stand-in OpenAI chat.completions API that scripts the model's two
 * answers (the real API cannot be reached here), and reading the tape back.
 */
import http from 'node:http';
import { expect } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { readSpanRows, type TestTapedeck } from './tapedeck-server.js';

export const SYSTEM = 'You are a concise weather assistant.';
export const QUESTION = 'What is the weather in Paris right now?';
export const TOOL_CALL_ID = 'call_weather_1';
export const TOOL_ARGUMENTS = { city: 'Paris', unit: 'celsius' };
export const TOOL_RESULT = { temperature_c: 18, conditions: 'sunny' };
export const ANSWER = 'It is 18 °C and sunny in Paris.';
export const REQUEST_MODEL = 'gpt-4o-mini';
export const RESPONSE_MODEL = 'gpt-4o-mini-2024-07-18';
export const USAGE = [
  { prompt_tokens: 61, completion_tokens: 18, total_tokens: 79 },
  { prompt_tokens: 95, completion_tokens: 12, total_tokens: 107 },
] as const;

/** The get_weather tool as the model is told of it. */
export const GET_WEATHER_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city'],
    },
  },
};

/** get_weather as tapedeck records a tool offered to the model (its canonical request option). */
export const CANONICAL_GET_WEATHER = {
  name: GET_WEATHER_TOOL.function.name,
  description: GET_WEATHER_TOOL.function.description,
  parameters: GET_WEATHER_TOOL.function.parameters,
};

/** The two chat.completions answers the stub gives, in order. */
export function scriptedAnswer(turn: number): ChatCompletion {
  const base = {
    object: 'chat.completion' as const,
    created: 1_700_000_000,
    model: RESPONSE_MODEL,
    system_fingerprint: 'fp_live',
  };
  if (turn === 0) {
    return {
      ...base,
      id: 'chatcmpl-live-1',
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              {
                id: TOOL_CALL_ID,
                type: 'function',
                function: { name: 'get_weather', arguments: JSON.stringify(TOOL_ARGUMENTS) },
              },
            ],
          },
        },
      ],
      usage: { ...USAGE[0] },
    };
  }
  return {
    ...base,
    id: 'chatcmpl-live-2',
    choices: [
      {
        index: 0,
        logprobs: null,
        finish_reason: 'stop',
        message: { role: 'assistant', content: ANSWER, refusal: null },
      },
    ],
    usage: { ...USAGE[1] },
  };
}

/** What the tape must say, whichever library recorded the conversation. */
export const CANONICAL = {
  firstRequest: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: QUESTION },
  ],
  toolCallAnswer: [
    {
      role: 'assistant',
      finish_reason: 'tool_calls',
      tool_calls: [{ id: TOOL_CALL_ID, name: 'get_weather', arguments: TOOL_ARGUMENTS }],
    },
  ],
  assistantToolCall: {
    role: 'assistant',
    tool_calls: [{ id: TOOL_CALL_ID, name: 'get_weather', arguments: TOOL_ARGUMENTS }],
  },
  toolResult: { role: 'tool', tool_call_id: TOOL_CALL_ID, content: TOOL_RESULT },
  finalAnswer: [{ role: 'assistant', content: ANSWER, finish_reason: 'stop' }],
};

// ---------------------------------------------------------------------------------------
// The stand-in OpenAI API

export interface StubApi {
  baseURL: string;
  /** the bodies of the chat.completions requests it answered, in order */
  requests: Array<{ messages: ChatCompletionMessageParam[] } & Record<string, unknown>>;
  close(): Promise<void>;
}

/** The stub answered both turns, and the second request ends with the tool result the app (or SDK) appended. */
export function expectBothTurnsAnswered(api: StubApi): void {
  expect(api.requests).toHaveLength(2);
  expect(api.requests[1].messages.at(-1)).toEqual({
    role: 'tool',
    tool_call_id: TOOL_CALL_ID,
    content: JSON.stringify(TOOL_RESULT),
  });
}

export async function startStubApi(): Promise<StubApi> {
  const requests: StubApi['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as StubApi['requests'][number];
      requests.push(body);
      // the second turn is the one whose last message is the tool result
      const turn = body.messages.at(-1)?.role === 'tool' ? 1 : 0;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(scriptedAnswer(turn)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TapeStep {
  index: number;
  kind: string;
  name: string;
  model: string | null;
  tool: string | null;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  status: string;
  request: unknown;
  response: unknown;
  tokens: {
    input: number | null;
    output: number | null;
    cache_read: number | null;
    cache_write: number | null;
    context: number | null;
  };
  params: Record<string, unknown>;
  layout: string;
  request_digest: string | null;
  response_digest: string | null;
  fingerprint: string;
}
export interface Tape {
  run: string;
  truncated: boolean;
  steps: TapeStep[];
}

export async function readTape(t: TestTapedeck, run: string): Promise<Tape> {
  const res = await fetch(`${t.url}/v1/tapes/${encodeURIComponent(run)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Tape;
}

/** On failure, what the library actually sent: span names and attributes. */
export async function describeSpans(t: TestTapedeck, traceId: string): Promise<string> {
  const rows = await readSpanRows(t.db, [traceId]);
  return JSON.stringify(
    rows.map((r) => ({ name: r.name, span_id: r.span_id, attributes: r.attributes })),
    null,
    1,
  );
}
