/**
 * The folding rules docs/architecture.md "Messages" lists, one test each, on hand-written spans in
 * each layout's exact key shapes: so that two layouts that said the same thing produce the
 * same bytes.
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpan, NORMALIZER_VERSION } from '../../../src/normalize/normalize.js';
import { finishStep, fingerprintOf } from '../../../src/normalize/finish.js';
import { canonicalFinishReason, makeMessage } from '../../../src/normalize/messages.js';
import { unwrapEntityInput } from '../../../src/normalize/dialects/openllmetry.js';
import { comparableDigest as digestOf, comparableForm } from '../../../src/normalize/comparable.js';
import type { Attributes } from '../../../src/spans/span-record.js';
import type { StepDraft } from '../../../src/normalize/step.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { log, span } from '../../helpers/span-builder.js';

const j = (v: unknown) => JSON.stringify(v);
const genAi = (attributes: Attributes) =>
  normalizeSpan(
    span({ name: 'chat m', kind: 'client', attributes: { 'gen_ai.operation.name': 'chat', ...attributes } }),
  ).step as StepDraft;
const oi = (attributes: Attributes) =>
  normalizeSpan(span({ name: 'LLM', attributes: { 'openinference.span.kind': 'LLM', ...attributes } }))
    .step as StepDraft;
const userSays = (text: string) => j([{ role: 'user', parts: [{ type: 'text', content: text }] }]);

describe('canonical messages', () => {
  it('keeps JSON-shaped text as recorded, and compares it as JSON (object or array); a JSON string literal or number is text', () => {
    expect(makeMessage({ role: 'tool', content: '{"a": 1}' }).content).toBe('{"a": 1}');
    expect(comparableForm(makeMessage({ role: 'tool', content: '{"a": 1}' }).content!)).toEqual({ a: 1 });
    expect(comparableForm(makeMessage({ role: 'tool', content: ' [1,2]' }).content!)).toEqual([1, 2]);
    expect(comparableForm('"Where is the station?"')).toBe('"Where is the station?"');
    expect(comparableForm('42')).toBe('42');
    expect(comparableForm('{not json')).toBe('{not json');
    expect(digestOf(makeMessage({ role: 'tool', content: '{"a": 1}' }) as unknown as JsonValue)).toBe(
      digestOf({ role: 'tool', content: { a: 1 } }),
    );
  });

  it('treats empty content as missing: the key is left out and the digest is the same', () => {
    const empty = genAi({
      'gen_ai.input.messages': j([
        {
          role: 'assistant',
          parts: [
            { type: 'text', content: '' },
            { type: 'tool_call', id: 'c', name: 't', arguments: {} },
          ],
        },
      ]),
    });
    const missing = genAi({
      'gen_ai.input.messages': j([
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c', name: 't', arguments: {} }] },
      ]),
    });
    expect(empty.request).toEqual([{ role: 'assistant', tool_calls: [{ id: 'c', name: 't', arguments: {} }] }]);
    expect(digestOf(empty.request)).toBe(digestOf(missing.request));
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'tool_calls'],
    ['max_tokens', 'length'],
    ['tool_call', 'tool_calls'],
    ['tool-calls', 'tool_calls'],
    ['content-filter', 'content_filter'],
    ['stop', 'stop'],
    ['length', 'length'],
    ['pause_turn', 'pause_turn'],
    ['', undefined],
  ])('finish reason %j reads as %j (OpenAI chat vocabulary)', (raw, canonical) => {
    expect(canonicalFinishReason(raw)).toBe(canonical);
  });

  it('reads tool-call arguments as parsed JSON, so spacing and escaping do not matter', () => {
    const asString = genAi({
      'gen_ai.output.messages': j([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'c', name: 't', arguments: '{ "city" : "Par\\u0069s" }' }],
        },
      ]),
    });
    const asObject = genAi({
      'gen_ai.output.messages': j([
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c', name: 't', arguments: { city: 'Paris' } }] },
      ]),
    });
    expect(digestOf(asString.response)).toBe(digestOf(asObject.response));
  });

  it('makes every tool result a tool message with its tool_call_id, whichever shape carried it', () => {
    const expected = [{ role: 'tool', tool_call_id: 'toolu_1', content: '{"t":14}' }];
    // GenAI parts in a user message (Traceloop Anthropic), response as content blocks (Anthropic SDK)
    expect(
      genAi({
        'gen_ai.input.messages': j([
          {
            role: 'user',
            parts: [{ type: 'tool_call_response', id: 'toolu_1', response: [{ type: 'text', text: '{"t":14}' }] }],
          },
        ]),
      }).request,
    ).toEqual(expected);
    // OpenInference flattened: a user message with a tool_call_id (Anthropic)
    expect(
      oi({
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.tool_call_id': 'toolu_1',
        'llm.input_messages.0.message.content': '{"t":14}',
      }).request,
    ).toEqual(expected);
    // Anthropic request body: a tool_result block
    expect(
      oi({
        'input.mime_type': 'application/json',
        'input.value': j({
          model: 'c',
          messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"t":14}' }] }],
        }),
      }).request,
    ).toEqual(expected);
  });

  it('makes an Anthropic system parameter a leading system message, like gen_ai.system_instructions', () => {
    const body = oi({
      'input.mime_type': 'application/json',
      'input.value': j({
        model: 'c',
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    const parts = genAi({
      'gen_ai.system_instructions': j([{ type: 'text', content: 'Be brief.' }]),
      'gen_ai.input.messages': userSays('Hi'),
    });
    expect(body.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(digestOf(body.request)).toBe(digestOf(parts.request));
  });

  it('reads a structured (kvlist) attribute exactly like its JSON-string form', () => {
    const messages = [
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'Hi' },
          { type: 'text', content: ' there' },
        ],
      },
    ];
    expect(genAi({ 'gen_ai.input.messages': messages }).request).toEqual(
      genAi({ 'gen_ai.input.messages': j(messages) }).request,
    );
    expect(genAi({ 'gen_ai.input.messages': messages }).request).toEqual([{ role: 'user', content: 'Hi there' }]);
  });

  it('reads OTel per-message log records like the same conversation on span attributes', () => {
    const s = span({ name: 'chat m', id: 'chat', kind: 'client', attributes: { 'gen_ai.operation.name': 'chat' } });
    const fromLogs = normalizeSpan(s, [
      log('chat', 'gen_ai.user.message', { content: 'Hi' }),
      log('chat', 'gen_ai.choice', { index: 0, finish_reason: 'stop', message: { content: 'Yo' } }),
    ]).step as StepDraft;
    const fromAttrs = genAi({
      'gen_ai.input.messages': userSays('Hi'),
      'gen_ai.output.messages': j([
        { role: 'assistant', parts: [{ type: 'text', content: 'Yo' }], finish_reason: 'stop' },
      ]),
    });
    expect(fromLogs.layout).toBe('otel-genai-events');
    expect([digestOf(fromLogs.request), digestOf(fromLogs.response)]).toEqual([
      digestOf(fromAttrs.request),
      digestOf(fromAttrs.response),
    ]);
  });
});

describe('Traceloop entity input', () => {
  it.each([
    [{ args: [], kwargs: { city: 'Paris' } }, { city: 'Paris' }],
    [{ args: ['Paris'], kwargs: {} }, 'Paris'],
    [{ args: [], kwargs: {} }, {}],
    [
      { args: ['Paris', 2], kwargs: {} },
      { args: ['Paris', 2], kwargs: {} },
    ],
    [
      { args: ['Paris'], kwargs: { units: 'C' } },
      { args: ['Paris'], kwargs: { units: 'C' } },
    ],
    [{ city: 'Paris' }, { city: 'Paris' }],
  ])('unwraps %j to %j', (input, expected) => {
    expect(unwrapEntityInput(input)).toEqual(expected);
  });
});

describe('step facts', () => {
  it('takes the response model, else the request model', () => {
    expect(genAi({ 'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-2024-08-06' }).model).toBe(
      'gpt-4o-2024-08-06',
    );
    expect(genAi({ 'gen_ai.request.model': 'gpt-4o' }).model).toBe('gpt-4o');
  });

  it('leaves unreported token counts null, never 0', () => {
    expect(genAi({ 'gen_ai.usage.output_tokens': 5 }).tokens).toEqual({
      input: null,
      output: 5,
      cache_read: null,
      cache_write: null,
      context: null,
    });
    expect(genAi({ 'gen_ai.usage.input_tokens': 0 }).tokens.input).toBe(0); // a reported 0 is kept
  });

  it('records no content when capture was off, but keeps the step, its model and tokens', () => {
    const step = genAi({ 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 3 });
    expect([step.kind, step.model, step.request, step.response, step.tokens.input]).toEqual([
      'llm',
      'm',
      null,
      null,
      3,
    ]);
    expect(finishStep(step)).toMatchObject({ request_digest: null, response_digest: null, fingerprint: 'llm:m#' });
  });

  it('names agent steps after the agent', () => {
    const otel = normalizeSpan(
      span({
        name: 'invoke_agent',
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
      }),
    ).step;
    const tl = normalizeSpan(
      span({
        name: 'planner.agent',
        attributes: { 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'planner' },
      }),
    ).step;
    const oiAgent = normalizeSpan(span({ name: 'planner', attributes: { 'openinference.span.kind': 'AGENT' } })).step;
    expect([otel?.name, tl?.name, oiAgent?.name]).toEqual(['planner', 'planner', 'planner']);
  });

  it('treats workflow, task, chain, retrieval, embeddings and HTTP spans as context', () => {
    const context: Attributes[] = [
      { 'traceloop.span.kind': 'workflow' },
      { 'traceloop.span.kind': 'task' },
      { 'openinference.span.kind': 'CHAIN' },
      { 'openinference.span.kind': 'RETRIEVER' },
      { 'gen_ai.operation.name': 'embeddings' },
      { 'http.request.method': 'GET' },
      { 'gen_ai.operation.name': 'invoke_workflow' },
    ];
    for (const attributes of context)
      expect(normalizeSpan(span({ attributes })).step, JSON.stringify(attributes)).toBeNull();
  });

  it('reads the span status and a metered cost', () => {
    const step = normalizeSpan(
      span({ status: 'error', attributes: { 'openinference.span.kind': 'LLM', 'llm.cost.total': 0.0042 } }),
    ).step as StepDraft;
    expect([step.status, step.costUsd]).toEqual(['error', 0.0042]);
  });
});

describe('run identity', () => {
  const facts = (attributes: Attributes) => normalizeSpan(span({ attributes }));
  it('reads session.id, then gen_ai.conversation.id, then the Traceloop session property', () => {
    expect(
      facts({ 'session.id': 'a', 'gen_ai.conversation.id': 'b', 'traceloop.association.properties.session_id': 'c' })
        .ownRun,
    ).toBe('a');
    expect(facts({ 'gen_ai.conversation.id': 'b', 'traceloop.association.properties.session_id': 'c' }).ownRun).toBe(
      'b',
    );
    expect(facts({ 'traceloop.association.properties.session_id': 'c' }).ownRun).toBe('c');
    expect(facts({ 'session.id': 42 }).ownRun).toBe('42');
    expect(facts({ 'session.id': '' }).ownRun).toBeNull();
  });

  it('reads an explicit parent run from tapedeck.parent_run (or session.parent_id)', () => {
    expect(facts({ 'tapedeck.parent_run': 'p1', 'session.parent_id': 'p2' }).parentRun).toBe('p1');
    expect(facts({ 'session.parent_id': 'p2' }).parentRun).toBe('p2');
    expect(facts({}).parentRun).toBeNull();
  });
});

describe('finishing', () => {
  it('fingerprints by model, tool name or agent name and the first 16 hex of the request digest', () => {
    const d = 'ab'.repeat(32);
    expect(fingerprintOf('llm', 'gpt-4o', d)).toBe(`llm:gpt-4o#${'ab'.repeat(8)}`);
    expect(fingerprintOf('tool', 'get_weather', null)).toBe('tool:get_weather#');
    const tool = normalizeSpan(
      span({
        name: 'get_weather.tool',
        attributes: {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.name': 'get_weather',
          'traceloop.entity.input': j({ args: [], kwargs: { city: 'Paris' } }),
        },
      }),
    ).step as StepDraft;
    const finished = finishStep(tool);
    expect(finished.fingerprint).toBe(`tool:get_weather#${(finished.request_digest as string).slice(0, 16)}`);
    expect(finished.request_digest).toBe(digestOf({ city: 'Paris' }));
  });

  it('names a model step by the model it asked for, and shows the one that answered', () => {
    const messages = j([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]);
    const layouts: [string, Attributes][] = [
      [
        'otel-genai',
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
          'gen_ai.input.messages': messages,
        },
      ],
      [
        'openinference (invocation parameters)',
        {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o-mini-2024-07-18',
          'llm.invocation_parameters': j({ model: 'gpt-4o-mini' }),
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': 'hi',
        },
      ],
      [
        'openinference (request body)',
        {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o-mini-2024-07-18',
          'input.value': j({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
          'input.mime_type': 'application/json',
        },
      ],
      [
        'vercel-ai',
        {
          'operation.name': 'ai.generateText.doGenerate',
          'ai.model.id': 'gpt-4o-mini',
          'ai.response.model': 'gpt-4o-mini-2024-07-18',
          'ai.prompt.messages': j([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]),
        },
      ],
    ];
    for (const [layout, attributes] of layouts) {
      const finished = finishStep(normalizeSpan(span({ name: 'chat', attributes })).step as StepDraft);
      expect(finished.model, layout).toBe('gpt-4o-mini-2024-07-18');
      expect(finished.fingerprint, layout).toBe(`llm:gpt-4o-mini#${(finished.request_digest as string).slice(0, 16)}`);
    }
    // Only the response model recorded (OpenInference with no request model): that names it.
    const only = { 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini-2024-07-18' };
    expect(finishStep(normalizeSpan(span({ name: 'chat', attributes: only })).step as StepDraft).fingerprint).toBe(
      'llm:gpt-4o-mini-2024-07-18#',
    );
  });

  it('digests the tools offered, tool_choice and response_format with the messages', () => {
    const weatherTool = {
      name: 'get_weather',
      description: 'Get the current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    };
    const chat = (extra: Attributes) =>
      finishStep(
        normalizeSpan(
          span({
            name: 'chat gpt-4o',
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.request.model': 'gpt-4o',
              'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Paris?' }] }]),
              ...extra,
            },
          }),
        ).step as StepDraft,
      );
    const bare = chat({});
    const openAi = chat({ 'gen_ai.tool.definitions': j([{ type: 'function', function: weatherTool }]) });
    const other = chat({
      'gen_ai.tool.definitions': j([{ type: 'function', function: { ...weatherTool, name: 'get_forecast' } }]),
    });
    // no options recorded: the messages alone, as before
    expect(bare.request_digest).toBe(digestOf(bare.request));
    expect(bare.params.tools).toBeUndefined();
    // only the tools differ: the digests differ, and the fingerprints with them
    expect(openAi.params.tools).toEqual([weatherTool]);
    expect(openAi.request_digest).toBe(digestOf({ messages: openAi.request as JsonValue, tools: [weatherTool] }));
    expect(new Set([bare.request_digest, openAi.request_digest, other.request_digest]).size).toBe(3);
    expect(openAi.fingerprint).not.toBe(other.fingerprint);
    // the same tool in Anthropic's spelling (OpenInference's llm.tools) is the same request
    const { parameters, ...rest } = weatherTool;
    const anthropic = chat({ 'llm.tools.0.tool.json_schema': j({ ...rest, input_schema: parameters }) });
    expect(anthropic.request_digest).toBe(openAi.request_digest);
    // tool_choice in either provider's spelling, and response_format, as recorded
    const forced = (choice: JsonValue) =>
      normalizeSpan(
        span({
          name: 'ChatCompletion',
          attributes: {
            'openinference.span.kind': 'LLM',
            'llm.model_name': 'gpt-4o',
            'llm.invocation_parameters': j({
              tool_choice: choice,
              response_format: { type: 'json_object' },
              temperature: 0,
            }),
            'llm.input_messages.0.message.role': 'user',
            'llm.input_messages.0.message.content': 'Paris?',
          },
        }),
      ).step as StepDraft;
    const openAiChoice = forced({ type: 'function', function: { name: 'get_weather' } });
    expect(openAiChoice.params).toEqual({
      temperature: 0,
      tool_choice: { name: 'get_weather' },
      response_format: { type: 'json_object' },
    });
    expect(forced({ type: 'tool', name: 'get_weather' }).params.tool_choice).toEqual({ name: 'get_weather' });
    expect(forced({ type: 'any' }).params.tool_choice).toBe('required');
    expect(finishStep(openAiChoice).request_digest).not.toBe(finishStep(forced('auto')).request_digest);
  });

  it('exports a normalizer version', () => {
    expect(Number.isInteger(NORMALIZER_VERSION)).toBe(true);
  });
});
