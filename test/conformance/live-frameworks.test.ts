/**
 * Conformance with an agent framework's own telemetry, live: the Vercel AI SDK (`ai`) with
 * `experimental_telemetry: { isEnabled: true }` and the `@ai-sdk/openai` provider, exporting
 * through the real OTLP/HTTP protobuf exporter into a running tapedeck.
 *
 * Scope: the same scripted weather conversation as live-instrumentations.test.ts, but driven
 * by the SDK: one generateText call with a get_weather tool and `stopWhen: stepCountIs(2)`, so
 * the SDK runs the tool itself and calls the model a second time with the tool result. The only
 * stand-in is the OpenAI API: a small local HTTP server answers the two chat.completions
 * requests (the provider's `openai.chat(...)` model) and records what it was sent. The tape
 * tapedeck serves for the run must hold model call, tool call, model call, in that order,
 * with the canonical messages, the tool's arguments and result, and the token counts.
 *
 * Versions: ai 6.0.326 and @ai-sdk/openai 3.0.141, the newest releases whose `engines` allow
 * Node 20 (every ai 7.x and @ai-sdk/openai 4.x needs Node >= 22). AI SDK 6 emits the legacy
 * `ai.*` span layout (src/normalize/dialects/vercel-ai.ts) when telemetry is enabled.
 *
 * No patching: the SDK writes its spans through the global OpenTelemetry API
 * (`trace.getTracer('ai')` unless a tracer is passed), so the test registers its tracer
 * provider globally for the conversation, the way an app's OTel setup does.
 *
 * Anthropic through @anthropic-ai/sdk with @traceloop/instrumentation-anthropic is not here:
 * every release of that instrumentation (0.22.x to 0.27.0, the latest) declares
 * `@anthropic-ai/sdk >=0.9.1` but its patch wraps `Anthropic.Completions.prototype.create` first,
 * and @anthropic-ai/sdk 1.x has no `Anthropic.Completions`, so patching throws before
 * `Messages.create` is wrapped (checked with 0.27.0: with the instrumentation enabled,
 * `require('@anthropic-ai/sdk')` itself throws "Cannot read properties of undefined (reading
 * 'prototype')"): no release instruments the 1.14.0 the project pins.
 *
 * LangChain JS traced by OpenInference: @langchain/openai 1.5.8 ChatOpenAI (the stand-in as
 * `configuration.baseURL`) with get_weather bound by bindTools, invoked with the system and user
 * messages; the app runs the tool call itself, appends a ToolMessage and invokes again.
 * @arizeai/openinference-instrumentation-langchain 4.1.1 is applied with manuallyInstrument on
 * `@langchain/core/callbacks/manager` (it wraps CallbackManager._configureSync, so no require hook
 * is needed) and writes the chat-model runs as LLM spans (openinference dialect,
 * src/normalize/langchain-messages.ts). Versions: @langchain/core 1.4.0 (Node >= 20) and
 * @langchain/openai 1.5.8, the newest whose `engines` allow Node 20 (1.5.9 and later need
 * Node >= 22 and openai 7); it uses the project's openai 6.49.0.
 *
 * The conversation runs under a parent span carrying `session.id`, so all its spans land in
 * one named run.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { comparableForm } from '../../src/normalize/comparable.js';
import type { JsonValue } from '../../src/json/json-value.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  SYSTEM,
  QUESTION,
  TOOL_ARGUMENTS,
  TOOL_RESULT,
  ANSWER,
  REQUEST_MODEL,
  RESPONSE_MODEL,
  USAGE,
  CANONICAL,
  GET_WEATHER_TOOL,
  type StubApi,
  startStubApi,
  expectBothTurnsAnswered,
  type TapeStep,
  type Tape,
  readTape,
  describeSpans,
  CANONICAL_GET_WEATHER,
} from '../helpers/weather-conversation.js';
import { readSpanRows, startTestTapedeck, START_TIMEOUT_MS, type TestTapedeck } from '../helpers/tapedeck-server.js';

// ---------------------------------------------------------------------------------------
// The app: one generateText that calls the model, runs the tool, calls the model again

/** The arguments the SDK handed the tool's execute, per call. */
const toolInputs: unknown[] = [];

async function runConversation(api: StubApi, provider: BasicTracerProvider, run: string): Promise<void> {
  const openai = createOpenAI({ apiKey: 'sk-live-framework-test', baseURL: api.baseURL });
  const tracer = provider.getTracer('live-weather-agent');
  await tracer.startActiveSpan('weather-agent', { attributes: { 'session.id': run } }, async (span) => {
    try {
      const result = await generateText({
        model: openai.chat(REQUEST_MODEL),
        system: SYSTEM,
        prompt: QUESTION,
        temperature: 0,
        maxRetries: 0,
        tools: {
          get_weather: tool({
            description: 'Current weather for a city',
            inputSchema: jsonSchema<{ city: string; unit?: 'celsius' | 'fahrenheit' }>({
              type: 'object',
              properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
              required: ['city'],
            }),
            // the "tool": answers the scripted weather for the arguments the model chose
            execute: async (input) => {
              toolInputs.push(input);
              return TOOL_RESULT;
            },
          }),
        },
        stopWhen: stepCountIs(2),
        experimental_telemetry: { isEnabled: true },
      });
      expect(result.text).toBe(ANSWER);
      expect(result.steps).toHaveLength(2);
    } finally {
      span.end();
    }
  });
}

// ---------------------------------------------------------------------------------------
// The LangChain app: ChatOpenAI with a bound tool, invoked, the tool run by hand, invoked again

async function runLangChainConversation(api: StubApi, provider: BasicTracerProvider, run: string): Promise<void> {
  const model = new ChatOpenAI({
    model: REQUEST_MODEL,
    temperature: 0,
    maxRetries: 0,
    apiKey: 'sk-live-framework-test',
    configuration: { baseURL: api.baseURL },
  }).bindTools([GET_WEATHER_TOOL]);
  const tracer = provider.getTracer('live-weather-agent');
  await tracer.startActiveSpan('weather-agent', { attributes: { 'session.id': run } }, async (span) => {
    try {
      const messages: BaseMessage[] = [new SystemMessage(SYSTEM), new HumanMessage(QUESTION)];
      const first = await model.invoke(messages);
      expect(first).toBeInstanceOf(AIMessage);
      messages.push(first);
      for (const call of first.tool_calls ?? []) {
        // the "tool": answers the scripted weather for the arguments the model chose
        toolInputs.push(call.args);
        messages.push(new ToolMessage({ tool_call_id: call.id!, content: JSON.stringify(TOOL_RESULT) }));
      }
      const second = await model.invoke(messages);
      expect(second.content).toBe(ANSWER);
    } finally {
      span.end();
    }
  });
}

// ---------------------------------------------------------------------------------------
// The Vercel AI SDK, end to end

describe.each(databaseKinds)('live Vercel AI SDK telemetry, generateText with a tool (%s)', (kind) => {
  let t: TestTapedeck;
  const contextManager = new AsyncLocalStorageContextManager();
  const run = `live-vercel-ai-${randomBytes(4).toString('hex')}`;
  let api: StubApi;
  let tape: Tape;
  let traceId: string;
  let llm: TapeStep[];
  let tools: TapeStep[];

  beforeAll(async () => {
    context.setGlobalContextManager(contextManager.enable());
    t = await startTestTapedeck(kind);
    api = await startStubApi();
    toolInputs.length = 0;
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'live-weather-agent' }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${t.url}/v1/traces` }))],
    });
    trace.setGlobalTracerProvider(provider);
    try {
      await runConversation(api, provider, run);
    } finally {
      await provider.forceFlush();
      await provider.shutdown();
      trace.disable();
    }
    tape = await readTape(t, run);
    traceId = tape.steps[0]?.trace_id ?? '';
    llm = tape.steps.filter((s) => s.kind === 'llm');
    tools = tape.steps.filter((s) => s.kind === 'tool');
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    context.disable();
    trace.disable();
    await api?.close();
    await t?.close();
  });

  it('the stub answered both turns, the second with the tool result the SDK appended', () => {
    expectBothTurnsAnswered(api);
    expect(toolInputs).toEqual([TOOL_ARGUMENTS]);
  });

  it("puts model call, tool call, model call on the run's tape, in order, read from the ai.* layout", async () => {
    expect(tape.run).toBe(run);
    expect(tape.truncated).toBe(false);
    // the app's span and the SDK's ai.generateText span around the steps are context, not steps
    expect(
      tape.steps.map((s) => s.kind),
      await describeSpans(t, traceId),
    ).toEqual(['llm', 'tool', 'llm']);
    expect(tape.steps.map((s) => s.name)).toEqual([
      'ai.generateText.doGenerate',
      'ai.toolCall',
      'ai.generateText.doGenerate',
    ]);
    expect(tape.steps.map((s) => s.layout)).toEqual(['vercel-ai', 'vercel-ai', 'vercel-ai']);
    expect(llm.map((s) => s.model)).toEqual([RESPONSE_MODEL, RESPONSE_MODEL]);
    expect(tape.steps.map((s) => s.status)).not.toContain('error');
    expect(tape.steps.map((s) => s.index)).toEqual([...tape.steps.map((s) => s.index)].sort((a, b) => a - b));
    // every step is a child of the SDK's ai.generateText span, itself a child of the app's span
    const rows = await readSpanRows(t.db, [traceId]);
    const root = rows.find((r) => r.name === 'weather-agent')!;
    const outer = rows.filter((r) => r.name === 'ai.generateText');
    expect(outer).toHaveLength(1);
    expect(outer[0]).toMatchObject({ scope_name: 'ai', parent_span_id: root.span_id });
    for (const step of tape.steps) {
      const row = rows.find((r) => r.span_id === step.span_id)!;
      expect(row).toMatchObject({ scope_name: 'ai', parent_span_id: outer[0].span_id });
    }
  });

  it('keeps the request configuration the SDK recorded, the tools offered included', () => {
    const params = { model: REQUEST_MODEL, temperature: 0, tool_choice: 'auto', tools: [CANONICAL_GET_WEATHER] };
    expect(llm.map((s) => s.params)).toEqual([params, params]);
  });

  it('first call: the system prompt and the user question in, the tool call (name, parsed arguments, id) out', async () => {
    const [first] = llm;
    expect(comparableForm(first.request as JsonValue), await describeSpans(t, traceId)).toEqual(CANONICAL.firstRequest);
    expect(comparableForm(first.response as JsonValue)).toEqual(CANONICAL.toolCallAnswer);
  });

  it('the tool step: the tool name, the arguments the SDK passed and the result it returned', async () => {
    expect(tools, await describeSpans(t, traceId)).toHaveLength(1);
    const [step] = tools;
    expect(step.tool).toBe('get_weather');
    expect(step.model).toBeNull();
    expect(comparableForm(step.request as JsonValue)).toEqual(TOOL_ARGUMENTS);
    expect(comparableForm(step.response as JsonValue)).toEqual(TOOL_RESULT);
    expect(step.fingerprint).toMatch(/^tool:get_weather#[0-9a-f]{16}$/);
    // the tool step comes after the answer that asked for it and before the call that reads its result
    expect(tape.steps.indexOf(step)).toBe(1);
  });

  it('second call: the assistant tool call and the tool result (with its call id) in, the final answer out', async () => {
    const [, second] = llm;
    expect(comparableForm(second.request as JsonValue), await describeSpans(t, traceId)).toEqual([
      ...CANONICAL.firstRequest,
      CANONICAL.assistantToolCall,
      CANONICAL.toolResult,
    ]);
    expect(comparableForm(second.response as JsonValue)).toEqual(CANONICAL.finalAnswer);
  });

  it("token counts are the usage the API reported, on the model calls only (the outer span's totals are not counted again)", async () => {
    // @ai-sdk/openai 3.0.141 reports cached_tokens as 0 when the API sent no
    // prompt_tokens_details (`?? 0`), so the spans carry ai.usage.cachedInputTokens: 0 and the
    // tape keeps that 0: reported, not missing. context is the input the call saw.
    expect(llm.map((s) => s.tokens)).toEqual(
      USAGE.map((u) => ({
        input: u.prompt_tokens,
        output: u.completion_tokens,
        cache_read: 0,
        cache_write: null,
        context: u.prompt_tokens,
      })),
    );
    expect(tools[0].tokens).toEqual({ input: null, output: null, cache_read: null, cache_write: null, context: null });
    // the ai.generateText span carries the sum over both calls; no step takes it
    const rows = await readSpanRows(t.db, [traceId]);
    const outer = rows.find((r) => r.name === 'ai.generateText')!;
    expect(outer.attributes).toMatchObject({
      'ai.usage.inputTokens': USAGE[0].prompt_tokens + USAGE[1].prompt_tokens,
      'ai.usage.outputTokens': USAGE[0].completion_tokens + USAGE[1].completion_tokens,
    });
    for (const step of llm) {
      expect(rows.find((r) => r.span_id === step.span_id)!.attributes).toMatchObject({
        'ai.usage.cachedInputTokens': 0,
      });
    }
  });

  it('fingerprints name the request model and the tool', () => {
    expect(tape.steps.map((s) => s.fingerprint.split('#')[0])).toEqual([
      `llm:${REQUEST_MODEL}`,
      'tool:get_weather',
      `llm:${REQUEST_MODEL}`,
    ]);
    expect(tape.steps.every((s) => s.request_digest && s.response_digest)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------
// LangChain JS traced by OpenInference, end to end

describe.each(databaseKinds)(
  'live LangChain JS traced by @arizeai/openinference-instrumentation-langchain, ChatOpenAI with a bound tool (%s)',
  (kind) => {
    let t: TestTapedeck;
    const contextManager = new AsyncLocalStorageContextManager();
    const run = `live-langchain-${randomBytes(4).toString('hex')}`;
    let api: StubApi;
    let tape: Tape;
    let traceId: string;
    let llm: TapeStep[];

    beforeAll(async () => {
      context.setGlobalContextManager(contextManager.enable());
      t = await startTestTapedeck(kind);
      api = await startStubApi();
      toolInputs.length = 0;
      const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': 'live-weather-agent' }),
        spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${t.url}/v1/traces` }))],
      });
      const instrumentation = new LangChainInstrumentation({
        instrumentationConfig: { enabled: false },
        tracerProvider: provider,
      });
      instrumentation.manuallyInstrument(CallbackManagerModule);
      try {
        await runLangChainConversation(api, provider, run);
      } finally {
        // unwrap CallbackManager._configureSync again (manuallyInstrument has no public inverse;
        // disable() only undoes the require hook, not enabled here)
        (instrumentation as unknown as { unpatch(module: typeof CallbackManagerModule): void }).unpatch(
          CallbackManagerModule,
        );
        await provider.forceFlush();
        await provider.shutdown();
      }
      tape = await readTape(t, run);
      traceId = tape.steps[0]?.trace_id ?? '';
      llm = tape.steps.filter((s) => s.kind === 'llm');
    }, START_TIMEOUT_MS);
    afterAll(async () => {
      context.disable();
      await api?.close();
      await t?.close();
    });

    it('the stub answered both turns, the second with the tool result the app appended', () => {
      expectBothTurnsAnswered(api);
      expect(toolInputs).toEqual([TOOL_ARGUMENTS]);
    });

    it("puts both model calls on the run's tape, in order, read from the openinference layout", async () => {
      expect(tape.run).toBe(run);
      expect(tape.truncated).toBe(false);
      // the app's span names the run and is context, not a step; no tool step: the app ran the tool
      // itself, outside LangChain, so no tool run (and no TOOL span) exists
      expect(
        tape.steps.map((s) => s.kind),
        await describeSpans(t, traceId),
      ).toEqual(['llm', 'llm']);
      expect(tape.steps.map((s) => s.name)).toEqual(['ChatOpenAI', 'ChatOpenAI']);
      expect(llm.map((s) => s.layout)).toEqual(['openinference', 'openinference']);
      expect(llm.map((s) => s.status)).not.toContain('error');
      expect(llm[0].index).toBeLessThan(llm[1].index);
      // the chat-model runs' spans, children of the app's span: the model bound with bindTools is
      // a RunnableBinding, which starts no run of its own, so no chain span wraps them
      const rows = await readSpanRows(t.db, [traceId]);
      const root = rows.find((r) => r.name === 'weather-agent')!;
      expect(rows.map((r) => r.name).sort()).toEqual(['ChatOpenAI', 'ChatOpenAI', 'weather-agent']);
      for (const step of llm) {
        const row = rows.find((r) => r.span_id === step.span_id)!;
        expect(row).toMatchObject({
          scope_name: '@arizeai/openinference-instrumentation-langchain',
          parent_span_id: root.span_id,
        });
        expect(row.attributes).toMatchObject({ 'openinference.span.kind': 'LLM', 'llm.model_name': REQUEST_MODEL });
      }
    });

    it('names the model that answered, as the other layouts do', async () => {
      // llm.model_name on the LangChain JS spans is the request model (ChatOpenAI's `model`, from
      // the invocation params); the model that answered is in output.value, the AIMessage's
      // response_metadata.model_name, which tapedeck reads first (openinference.ts)
      expect(
        llm.map((s) => s.model),
        await describeSpans(t, traceId),
      ).toEqual([RESPONSE_MODEL, RESPONSE_MODEL]);
    });

    it('keeps the request configuration the instrumentation recorded, the bound tool included', () => {
      // llm.invocation_parameters is ChatOpenAI's request minus the messages: it says stream: false
      // (sent to the API too, see the stub's requests) besides model, temperature and the tools
      expect(api.requests.map((r) => r.stream)).toEqual([false, false]);
      const params = { model: REQUEST_MODEL, temperature: 0, stream: false, tools: [CANONICAL_GET_WEATHER] };
      expect(llm.map((s) => s.params)).toEqual([params, params]);
    });

    it('first call: the system prompt and the user question in, the tool call (name, parsed arguments, id) out', async () => {
      const [first] = llm;
      expect(comparableForm(first.request as JsonValue), await describeSpans(t, traceId)).toEqual(
        CANONICAL.firstRequest,
      );
      expect(comparableForm(first.response as JsonValue)).toEqual(CANONICAL.toolCallAnswer);
    });

    it('second call: the assistant tool call and the tool result (with its call id) in, the final answer out', async () => {
      const [, second] = llm;
      expect(comparableForm(second.request as JsonValue), await describeSpans(t, traceId)).toEqual([
        ...CANONICAL.firstRequest,
        CANONICAL.assistantToolCall,
        CANONICAL.toolResult,
      ]);
      expect(comparableForm(second.response as JsonValue)).toEqual(CANONICAL.finalAnswer);
    });

    it('token counts are the usage the API reported', () => {
      // no prompt_tokens_details from the API, so LangChain's usage_metadata.input_token_details is
      // {} and the spans carry no llm.token_count.prompt_details.*: cache counts are missing (null)
      expect(llm.map((s) => s.tokens)).toEqual(
        USAGE.map((u) => ({
          input: u.prompt_tokens,
          output: u.completion_tokens,
          cache_read: null,
          cache_write: null,
          context: u.prompt_tokens,
        })),
      );
    });

    it('fingerprints name the model the call asked for', () => {
      expect(llm.map((s) => s.fingerprint.split('#')[0])).toEqual([`llm:${REQUEST_MODEL}`, `llm:${REQUEST_MODEL}`]);
      expect(llm.every((s) => s.request_digest && s.response_digest)).toBe(true);
    });
  },
);
