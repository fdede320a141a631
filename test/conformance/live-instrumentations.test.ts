/**
 * Conformance with the real JavaScript GenAI instrumentations from npm, patching the
 * official `openai` client, exporting through the real OTLP/HTTP protobuf exporters into a
 * running tapedeck.
 *
 * Scope: one scripted two-turn tool-calling conversation (the user asks for the weather, the
 * model answers with a get_weather tool call, the app appends the tool result, the model
 * answers in text) is run by `openai` with each instrumentation in turn:
 *   - @opentelemetry/instrumentation-openai (OTel GenAI semconv; message content as log
 *     records, so a LoggerProvider with the OTLP logs exporter is wired too),
 *   - @traceloop/instrumentation-openai (OpenLLMetry JS),
 *   - @arizeai/openinference-instrumentation-openai (OpenInference JS).
 * The only stand-in is the OpenAI API itself: a small local HTTP server answers the two
 * chat.completions requests (the real API cannot be reached here) and records what it was
 * sent. The tape tapedeck serves for the run (`GET /v1/tapes/{run}`) must hold both model
 * calls in order, with the canonical messages and the token counts the stub reported.
 *
 * Patching: the instrumentations hook `require` (require-in-the-middle); vitest loads test
 * files as ESM, where they would need a loader hook, so the test loads the client the way a
 * CommonJS app does (createRequire) after the instrumentation is enabled: the same automatic
 * patching path users get, no manual-instrumentation API. Each instrumentation is created once
 * for the file (disabled), enabled for its conversation and disabled (unpatched) before the next
 * one is enabled: a require hook sees `openai` load only once per process, so a second instance
 * would never patch it, while re-enabling an instance patches the module it already saw.
 *
 * The conversation runs under a parent span carrying `session.id`, so both model calls land
 * in one named run (none of these instrumentations sets a session by itself).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OpenAIInstrumentation as OtelOpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';
import { OpenAIInstrumentation as TraceloopOpenAIInstrumentation } from '@traceloop/instrumentation-openai';
import { OpenAIInstrumentation as OpenInferenceOpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import type OpenAIType from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
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

const requireCjs = createRequire(import.meta.url);

// ---------------------------------------------------------------------------------------
// The tools the app offers (the conversation itself: helpers/weather-conversation.ts)

const TOOLS: ChatCompletionTool[] = [GET_WEATHER_TOOL];

// ---------------------------------------------------------------------------------------
// The app: two model calls and a tool, under one parent span that names the run

async function runConversation(
  OpenAI: typeof OpenAIType,
  api: StubApi,
  provider: BasicTracerProvider,
  run: string,
): Promise<void> {
  const client = new OpenAI({ apiKey: 'sk-live-instrumentation-test', baseURL: api.baseURL, maxRetries: 0 });
  const tracer = provider.getTracer('live-weather-agent');
  await tracer.startActiveSpan('weather-agent', { attributes: { 'session.id': run } }, async (span) => {
    try {
      const messages: ChatCompletionMessageParam[] = [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: QUESTION },
      ];
      const first = await client.chat.completions.create({
        model: REQUEST_MODEL,
        messages,
        tools: TOOLS,
        temperature: 0,
      });
      const asked = first.choices[0].message;
      messages.push(asked);
      for (const call of asked.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        // the "tool": answers the scripted weather for the arguments the model chose
        expect(JSON.parse(call.function.arguments)).toEqual(TOOL_ARGUMENTS);
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(TOOL_RESULT) });
      }
      const second = await client.chat.completions.create({
        model: REQUEST_MODEL,
        messages,
        tools: TOOLS,
        temperature: 0,
      });
      expect(second.choices[0].message.content).toBe(ANSWER);
    } finally {
      span.end();
    }
  });
}

// ---------------------------------------------------------------------------------------
// One instrumentation, end to end

interface InstrumentationLike {
  setTracerProvider(provider: BasicTracerProvider): void;
  enable(): void;
  disable(): void;
}

interface Subject {
  title: string;
  /** the layout tapedeck must have read the llm spans as */
  layout: string;
  /** the instrumentation's name in the OTLP scope of its spans */
  scope: string;
  /** constructs the instrumentation, disabled (no require hook yet) */
  create(): InstrumentationLike;
  /** the request configuration the instrumentation recorded (the app sent model, temperature 0 and
   * the get_weather tool) */
  params: Record<string, unknown>;
  /** whether it records the tools offered, which a request digest covers */
  recordsTools: boolean;
  /** message content travels as log records (OTel GenAI events) */
  logs?: (instrumentation: InstrumentationLike, loggerProvider: LoggerProvider) => void;
}

const subjects: Subject[] = [
  {
    title: '@opentelemetry/instrumentation-openai',
    layout: 'otel-genai-events',
    scope: '@opentelemetry/instrumentation-openai',
    // captureMessageContent is what OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true sets
    create: () => new OtelOpenAIInstrumentation({ enabled: false, captureMessageContent: true }),
    // 0.21 records no tool definitions
    params: { model: REQUEST_MODEL, temperature: 0 },
    recordsTools: false,
    logs: (instrumentation, loggerProvider) =>
      (instrumentation as OtelOpenAIInstrumentation).setLoggerProvider(loggerProvider),
  },
  {
    title: '@traceloop/instrumentation-openai',
    layout: 'openllmetry',
    scope: '@traceloop/instrumentation-openai',
    create: () => new TraceloopOpenAIInstrumentation({ enabled: false, traceContent: true }),
    // 0.27.0 sets gen_ai.request.temperature only when it is truthy (`if (params.temperature)`),
    // so the temperature 0 the app sent is not on its spans at all.
    params: { model: REQUEST_MODEL, tools: [CANONICAL_GET_WEATHER] },
    recordsTools: true,
  },
  {
    title: '@arizeai/openinference-instrumentation-openai',
    layout: 'openinference',
    scope: '@arizeai/openinference-instrumentation-openai',
    create: () => new OpenInferenceOpenAIInstrumentation({ instrumentationConfig: { enabled: false } }),
    params: { model: REQUEST_MODEL, temperature: 0, tools: [CANONICAL_GET_WEATHER] },
    recordsTools: true,
  },
];

/** One instance of each instrumentation for the whole file (see the note at the top). */
const instances = new Map<Subject, InstrumentationLike>();
function instanceOf(subject: Subject): InstrumentationLike {
  let instance = instances.get(subject);
  if (!instance) instances.set(subject, (instance = subject.create()));
  return instance;
}

/** Each instrumentation's llm steps, by title, for the comparison across them. */
const recorded = new Map<string, TapeStep[]>();

function conversationThrough(subject: Subject, server: () => TestTapedeck): void {
  const run = `live-${subject.layout}-${randomBytes(4).toString('hex')}`;
  let api: StubApi;
  let tape: Tape;
  let traceId: string;
  let llm: TapeStep[];

  beforeAll(async () => {
    const t = server();
    api = await startStubApi();
    const resource = resourceFromAttributes({ 'service.name': 'live-weather-agent' });
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${t.url}/v1/traces` }))],
    });
    const loggerProvider = new LoggerProvider({
      resource,
      processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${t.url}/v1/logs` }) })],
    });
    const instrumentation = instanceOf(subject);
    instrumentation.setTracerProvider(provider);
    subject.logs?.(instrumentation, loggerProvider);
    instrumentation.enable();
    try {
      // required after the instrumentation installed its hook: patched the CommonJS way
      const { OpenAI } = requireCjs('openai') as typeof import('openai');
      await runConversation(OpenAI, api, provider, run);
    } finally {
      instrumentation.disable();
      await provider.forceFlush();
      await loggerProvider.forceFlush();
      await provider.shutdown();
      await loggerProvider.shutdown();
    }
    tape = await readTape(t, run);
    traceId = tape.steps[0]?.trace_id ?? '';
    llm = tape.steps.filter((s) => s.kind === 'llm');
    recorded.set(subject.title, llm);
  });
  afterAll(async () => api?.close());

  it('the stub answered both turns, the second with the tool result appended', () => {
    expectBothTurnsAnswered(api);
  });

  it("puts both model calls on the run's tape, in order, read from the instrumentation's layout", async () => {
    expect(tape.run).toBe(run);
    expect(tape.truncated).toBe(false);
    expect(llm, await describeSpans(server(), traceId)).toHaveLength(2);
    // the app's own span names the run and is context, not a step
    expect(tape.steps.map((s) => s.kind)).toEqual(['llm', 'llm']);
    expect(llm.map((s) => s.layout)).toEqual([subject.layout, subject.layout]);
    expect(llm.map((s) => s.model)).toEqual([RESPONSE_MODEL, RESPONSE_MODEL]);
    expect(llm.map((s) => s.status)).not.toContain('error');
    expect(llm[0].index).toBeLessThan(llm[1].index);
    // the instrumentation's own spans (patched automatically), children of the app's span
    const rows = await readSpanRows(server().db, [traceId]);
    const root = rows.find((r) => r.name === 'weather-agent')!;
    for (const step of llm) {
      const row = rows.find((r) => r.span_id === step.span_id)!;
      expect(row).toMatchObject({ scope_name: subject.scope, parent_span_id: root.span_id });
    }
  });

  it('keeps the request configuration the instrumentation recorded', () => {
    expect(llm.map((s) => s.params)).toEqual([subject.params, subject.params]);
  });

  it('first call: the system prompt and the user question in, the tool call (name, parsed arguments, id) out', async () => {
    const [first] = llm;
    expect(comparableForm(first.request as JsonValue), await describeSpans(server(), traceId)).toEqual(
      CANONICAL.firstRequest,
    );
    expect(comparableForm(first.response as JsonValue)).toEqual(CANONICAL.toolCallAnswer);
  });

  it('second call: the assistant tool call and the tool result (with its call id) in, the final answer out', async () => {
    const [, second] = llm;
    expect(comparableForm(second.request as JsonValue), await describeSpans(server(), traceId)).toEqual([
      ...CANONICAL.firstRequest,
      CANONICAL.assistantToolCall,
      CANONICAL.toolResult,
    ]);
    expect(comparableForm(second.response as JsonValue)).toEqual(CANONICAL.finalAnswer);
  });

  it('token counts are the usage the API reported', () => {
    expect(llm.map((s) => ({ input: s.tokens.input, output: s.tokens.output }))).toEqual(
      USAGE.map((u) => ({ input: u.prompt_tokens, output: u.completion_tokens })),
    );
  });
}

describe.each(databaseKinds)('live GenAI instrumentations of the openai client (%s)', (kind) => {
  let t: TestTapedeck;
  const contextManager = new AsyncLocalStorageContextManager();
  beforeAll(async () => {
    context.setGlobalContextManager(contextManager.enable());
    t = await startTestTapedeck(kind);
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    context.disable();
    trace.disable();
    await t?.close();
  });

  for (const subject of subjects) {
    describe(subject.title, () => conversationThrough(subject, () => t));
  }

  it('gives each call the same digests and fingerprint whichever instrumentation recorded it', () => {
    // Needs every instrumentation's describe above to have run (vitest runs a file's tests in order).
    expect([...recorded.keys()]).toEqual(subjects.map((s) => s.title));
    const identity = (steps: TapeStep[]) =>
      steps.map((s) => ({
        request_digest: s.request_digest,
        response_digest: s.response_digest,
        fingerprint: s.fingerprint,
      }));
    // A request digest covers the tools offered, so only layouts that record them can agree on
    // it; one that does not (docs/api.md lists it) still agrees on every answer.
    const withTools = subjects.filter((s) => s.recordsTools);
    const [first, ...others] = withTools.map((s) => identity(recorded.get(s.title)!));
    expect(first.every((s) => s.request_digest && s.response_digest)).toBe(true);
    for (const [i, steps] of others.entries()) expect(steps, withTools[i + 1].title).toEqual(first);
    for (const subject of subjects.filter((s) => !s.recordsTools)) {
      const steps = identity(recorded.get(subject.title)!);
      expect(
        steps.map((s) => s.response_digest),
        subject.title,
      ).toEqual(first.map((s) => s.response_digest));
      expect(steps.every((s, i) => s.request_digest && s.request_digest !== first[i].request_digest)).toBe(true);
    }
  });
});
