/**
 * NOTE: JSON-shaped text is served as it was recorded. A model answered with JSON text (a
 * structured answer) and a tool call whose arguments hold an integer above 2^53, a number
 * with a trailing zero (`1.50`) and whitespace; parsing either would round the integer, drop
 * the zero and the spacing. The answer is recorded by spans built key for key as real
 * instrumentations write them (the corpus captures of the same libraries have these keys),
 * ingested by a running tapedeck, read back from the tape API, and replayed through the
 * official openai and @anthropic-ai/sdk clients, plain and streamed: every byte of the text
 * and the arguments comes back. A store whose steps an older normalizer derived (text
 * parsed) is re-derived by reindex, and the text is served again.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import type { Attributes, LogRecord, SpanRecord } from '../../src/spans/span-record.js';
import { canonicalJson } from '../../src/json/canonical.js';
import { comparableForm } from '../../src/normalize/comparable.js';
import { NORMALIZER_VERSION } from '../../src/normalize/normalize.js';
import { hasStepsOlderThan, reindex } from '../../src/tapes/reindex.js';
import { databaseKinds } from '../helpers/databases.js';
import { log, span } from '../helpers/span-builder.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const PROMPT = 'Record order 7 and give it back as JSON.';
/** The answer's text: JSON with an integer past 2^53, trailing zeros and its own spacing. */
const ANSWER = '{\n  "order_id": 12345678901234567890,\n  "total": 1.50,\n  "items": [ 2.0, 3 ]\n}';
/** The tool call's arguments as the provider sent them. */
const ARGS = '{"order_id": 98765432109876543211, "amount": 2.50,  "note": "as is" }';

const j = (v: unknown) => JSON.stringify(v);

/** @arizeai/openinference-instrumentation-openai: the request and response bodies, and flattened messages. */
function openInferenceOpenAi(run: string): SpanRecord {
  const id = 'oi-llm';
  const response = {
    id: 'chatcmpl-exact1',
    object: 'chat.completion',
    created: 1_796_000_000,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: ANSWER,
          tool_calls: [{ id: 'call_exact1', type: 'function', function: { name: 'record_order', arguments: ARGS } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 20, completion_tokens: 30, total_tokens: 50 },
  };
  return span({
    name: 'OpenAI Chat Completions',
    id,
    attributes: {
      'session.id': run,
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'gpt-4o-mini-2024-07-18',
      'llm.system': 'openai',
      'input.value': j({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] }),
      'input.mime_type': 'application/json',
      'llm.invocation_parameters': j({ model: 'gpt-4o-mini' }),
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': PROMPT,
      'output.value': j(response),
      'output.mime_type': 'application/json',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.content': ANSWER,
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_exact1',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'record_order',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': ARGS,
      'llm.finish_reason': 'tool_calls',
      'llm.token_count.prompt': 20,
      'llm.token_count.completion': 30,
      'llm.token_count.total': 50,
    },
  });
}

/** opentelemetry-instrumentation-openai (Traceloop, indexed gen_ai.prompt / gen_ai.completion keys). */
function openLlmetryOpenAi(run: string): SpanRecord {
  return span({
    name: 'openai.chat',
    id: 'ol-llm',
    kind: 'client',
    scope: 'opentelemetry.instrumentation.openai.v1',
    attributes: {
      'traceloop.association.properties.session_id': run,
      'llm.request.type': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': PROMPT,
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': ANSWER,
      'gen_ai.completion.0.finish_reason': 'tool_calls',
      'gen_ai.completion.0.tool_calls.0.id': 'call_exact1',
      'gen_ai.completion.0.tool_calls.0.name': 'record_order',
      'gen_ai.completion.0.tool_calls.0.arguments': ARGS,
      'gen_ai.usage.prompt_tokens': 20,
      'gen_ai.usage.completion_tokens': 30,
    },
  });
}

/** @opentelemetry/instrumentation-openai: a span, and the messages as gen_ai.* log records. */
function otelGenAiOpenAi(run: string): { spans: SpanRecord[]; logs: LogRecord[] } {
  const id = 'ge-llm';
  const attributes: Attributes = {
    'gen_ai.conversation.id': run,
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
    'gen_ai.response.finish_reasons': ['tool_calls'],
    'gen_ai.usage.input_tokens': 20,
    'gen_ai.usage.output_tokens': 30,
  };
  const choice = {
    index: 0,
    finish_reason: 'tool_calls',
    message: {
      content: ANSWER,
      tool_calls: [{ id: 'call_exact1', type: 'function', function: { name: 'record_order', arguments: ARGS } }],
    },
  };
  return {
    spans: [span({ name: 'chat gpt-4o-mini', id, kind: 'client', attributes })],
    logs: [log(id, 'gen_ai.user.message', { content: PROMPT }), log(id, 'gen_ai.choice', choice)],
  };
}

/**
 * opentelemetry-instrumentation-anthropic (Traceloop): the answer's text block and its
 * tool_use block, whose input it records as the JSON text of the arguments.
 */
function openLlmetryAnthropic(run: string): SpanRecord {
  return span({
    name: 'anthropic.chat',
    id: 'an-llm',
    kind: 'client',
    scope: 'opentelemetry.instrumentation.anthropic',
    attributes: {
      'traceloop.association.properties.session_id': run,
      'llm.request.type': 'chat',
      'gen_ai.system': 'Anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-6',
      'gen_ai.response.model': 'claude-sonnet-4-6',
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': PROMPT,
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': ANSWER,
      'gen_ai.completion.0.finish_reason': 'tool_use',
      'gen_ai.completion.0.tool_calls.0.id': 'toolu_exact1',
      'gen_ai.completion.0.tool_calls.0.name': 'record_order',
      'gen_ai.completion.0.tool_calls.0.arguments': ARGS,
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.output_tokens': 30,
    },
  });
}

/**
 * openinference-instrumentation-anthropic (Python): the response body as json.dumps wrote it
 * (the SDK had parsed the tool input, so `2.50` is `2.5` there, and the integer past 2^53
 * stays whole), and the flattened keys, whose arguments are json.dumps of the input.
 */
const PY_ARGS = '{"order_id": 98765432109876543211, "amount": 2.5, "note": "as is"}';
function openInferenceAnthropic(run: string): SpanRecord {
  const body =
    `{"id": "msg_exact2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", ` +
    `"content": [{"type": "text", "text": ${j(ANSWER)}}, {"type": "tool_use", "id": "toolu_exact2", ` +
    `"name": "record_order", "input": ${PY_ARGS}}], "stop_reason": "tool_use", "stop_sequence": null, ` +
    `"usage": {"input_tokens": 20, "output_tokens": 30}}`;
  return span({
    name: 'Messages',
    id: 'oa-llm',
    scope: 'openinference.instrumentation.anthropic',
    attributes: {
      'session.id': run,
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'claude-sonnet-4-6',
      'llm.system': 'anthropic',
      'llm.provider': 'anthropic',
      'input.value': j({ model: 'claude-sonnet-4-6', max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] }),
      'input.mime_type': 'application/json',
      'llm.invocation_parameters': j({ model: 'claude-sonnet-4-6', max_tokens: 256 }),
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': PROMPT,
      'output.value': body,
      'output.mime_type': 'application/json',
      'llm.finish_reason': 'tool_use',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.contents.0.message_content.type': 'text',
      'llm.output_messages.0.message.contents.0.message_content.text': ANSWER,
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'toolu_exact2',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'record_order',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': PY_ARGS,
      'llm.token_count.prompt': 20,
      'llm.token_count.completion': 30,
    },
  });
}

/** Each Anthropic run and the arguments' text its instrumentation recorded. */
const anthropicRuns: [string, string][] = [
  ['exact-anthropic', ARGS],
  ['exact-oi-anthropic', PY_ARGS],
];

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

describe.each(databaseKinds)('JSON-shaped text replayed exactly, on %s', (kind) => {
  let t: TestTapedeck;
  const openAiRuns = ['exact-openinference', 'exact-openllmetry', 'exact-otel-genai'];

  beforeAll(async () => {
    t = await startTestTapedeck(kind);
    const genAi = otelGenAiOpenAi('exact-otel-genai');
    await ingestLogs(genAi.logs, { tenant: '' }, t.running.store.ingest);
    await ingestSpans(
      [
        openInferenceOpenAi('exact-openinference'),
        openLlmetryOpenAi('exact-openllmetry'),
        ...genAi.spans,
        openLlmetryAnthropic('exact-anthropic'),
        openInferenceAnthropic('exact-oi-anthropic'),
      ],
      { tenant: '' },
      t.running.store.ingest,
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  async function replayOf(run: string): Promise<Any> {
    const res = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: j({ run, mode: 'strict' }),
    });
    const body = await res.json();
    expect(res.status, j(body)).toBe(201);
    return body;
  }
  const absolute = (u: string) => (u.startsWith('/') ? `${t.url}${u}` : u);

  it.each([...openAiRuns.map((r) => [r, ARGS]), ...anthropicRuns])(
    'the tape API serves %s as recorded',
    async (run, args) => {
      const tape = (await (await fetch(`${t.url}/v1/tapes/${run}`)).json()) as Any;
      const [step] = tape.steps;
      expect(step.kind).toBe('llm');
      expect(step.response).toEqual([
        {
          role: 'assistant',
          content: ANSWER,
          tool_calls: [{ id: expect.any(String), name: 'record_order', arguments: args }],
          finish_reason: 'tool_calls',
        },
      ]);
    },
  );

  it('digests the layouts alike, for all their different spellings', async () => {
    const steps = await Promise.all(
      openAiRuns.map(async (run) => ((await (await fetch(`${t.url}/v1/tapes/${run}`)).json()) as Any).steps[0]),
    );
    expect(new Set(steps.map((s) => s.request_digest)).size).toBe(1);
    expect(new Set(steps.map((s) => s.response_digest)).size).toBe(1);
    expect(new Set(steps.map((s) => s.fingerprint)).size).toBe(1);
  });

  it('reindex re-derives steps a normalizer before recorded text stored, and serves the text again', async () => {
    // What normalizer 10 stored: JSON-shaped text parsed (the integer rounded, 1.50 as 1.5),
    // the message list inline in the step (before the message store)
    const tapeNow = async () => ((await (await fetch(`${t.url}/v1/tapes/exact-openllmetry`)).json()) as Any).steps[0];
    const before = await tapeNow();
    const parsed = comparableForm(before.response);
    await t.db.query(
      `UPDATE tapedeck_store.steps SET response = $1, response_messages = NULL, normalizer_version = 10
        WHERE span_id = $2::bytea AND trace_id = $3::bytea`,
      [canonicalJson(parsed), Buffer.from(before.span_id, 'hex'), Buffer.from(before.trace_id, 'hex')],
    );
    const stale = await tapeNow();
    expect(stale.response[0].content).toEqual({ items: [2, 3], order_id: 12345678901234567000, total: 1.5 });
    expect(await hasStepsOlderThan(t.db, NORMALIZER_VERSION)).toBe(true);

    await reindex(t.db, t.running.store.derive);

    expect(await hasStepsOlderThan(t.db, NORMALIZER_VERSION)).toBe(false);
    const after = await tapeNow();
    expect(after.response[0].content).toBe(ANSWER);
    expect(after.response[0].tool_calls[0].arguments).toBe(ARGS);
    expect(after.response_digest).toBe(before.response_digest);
  });

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'plain';

    it.each(openAiRuns)(`replays %s ${how} through the openai SDK byte for byte`, async (run) => {
      const replay = await replayOf(run);
      const client = new OpenAI({ baseURL: absolute(replay.base_urls.openai), apiKey: 'k', maxRetries: 0 });
      const params = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: PROMPT }] };
      const completion = stream
        ? await client.chat.completions.stream({ ...params, stream: true }).finalChatCompletion()
        : await client.chat.completions.create(params);
      const message = completion.choices[0].message;
      expect(message.content).toBe(ANSWER);
      expect(message.tool_calls?.map((c) => (c.type === 'function' ? c.function.arguments : null))).toEqual([ARGS]);
    });

    it.each(anthropicRuns)(`replays %s ${how} through the @anthropic-ai/sdk byte for byte`, async (run, args) => {
      const replay = await replayOf(run);
      const client = new Anthropic({ baseURL: absolute(replay.base_urls.anthropic), apiKey: 'k', maxRetries: 0 });
      const params = {
        model: 'claude-sonnet-4-6',
        max_tokens: 256,
        messages: [{ role: 'user' as const, content: PROMPT }],
      };
      if (!stream) {
        // The tool_use input is an object on Anthropic's wire: the body carries the recorded text in its place.
        const raw = await client.messages.create(params).asResponse();
        const body = await raw.text();
        expect(body).toContain(`"input":${args}`);
        const message = JSON.parse(body) as Any;
        expect(message.content[0]).toEqual({ type: 'text', text: ANSWER });
        return;
      }
      const partials: string[] = [];
      const events = client.messages.stream(params);
      events.on('inputJson', (partial) => partials.push(partial));
      const message = await events.finalMessage();
      expect(message.content[0]).toMatchObject({ type: 'text', text: ANSWER });
      expect(partials.join('')).toBe(args); // the input's text, as the SDK received it
      expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'record_order' });
    });
  }
});
