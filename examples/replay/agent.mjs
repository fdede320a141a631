/**
 * A small weather agent: the official OpenAI SDK and a tool loop (the model asks for
 * get_weather, the agent runs it and sends the result back, until the model answers). With
 * AGENT_RUN set it is instrumented by @opentelemetry/instrumentation-openai (OTel GenAI
 * spans, message content as log records) and exports to tapedeck at TAPEDECK_URL, its run
 * named by session.id = AGENT_RUN. OPENAI_BASE_URL says where its model calls go: the
 * stand-in model, a replay or a fork. AGENT_SYSTEM replaces the system prompt.
 *
 * Prints one JSON line: {"answer", "calls"} or, when a call fails, {"error": {status, type,
 * step, message}} and exits 1.
 */
import { createRequire } from 'node:module';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const run = process.env.AGENT_RUN;
const system = process.env.AGENT_SYSTEM ?? 'You are a concise weather assistant. Use get_weather, then answer in one sentence.';
const question = process.env.AGENT_QUESTION ?? "What's the weather in Paris right now?";

const WEATHER = { Paris: { celsius: 12, sky: 'rainy' }, Lyon: { celsius: 9, sky: 'cloudy' } };
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

let provider;
let loggerProvider;
let instrumentation;
if (run) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const resource = resourceFromAttributes({ 'service.name': 'demo-weather-agent' });
  provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${process.env.TAPEDECK_URL}/v1/traces` }))],
  });
  loggerProvider = new LoggerProvider({
    resource,
    processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${process.env.TAPEDECK_URL}/v1/logs` }) })],
  });
  instrumentation = new OpenAIInstrumentation({ enabled: false, captureMessageContent: true });
  instrumentation.setTracerProvider(provider);
  instrumentation.setLoggerProvider(loggerProvider);
  instrumentation.enable();
}
// required after the instrumentation installed its hook, so the SDK is patched
const { OpenAI } = createRequire(import.meta.url)('openai');
const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'demo-key', maxRetries: 0 });

async function agent() {
  const messages = [
    { role: 'system', content: system },
    { role: 'user', content: question },
  ];
  for (let calls = 1; calls <= 5; calls++) {
    const completion = await client.chat.completions.create({ model: 'stand-in-1', messages, tools: TOOLS, temperature: 0 });
    const message = completion.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return { answer: message.content, calls };
    for (const call of message.tool_calls) {
      const { city } = JSON.parse(call.function.arguments);
      const result = { city, ...(WEATHER[city] ?? { celsius: 20, sky: 'clear' }) };
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  throw new Error('the model never answered');
}

let out;
try {
  out =
    provider === undefined
      ? await agent()
      : await provider.getTracer('demo-weather-agent').startActiveSpan('weather-agent', { attributes: { 'session.id': run } }, async (span) => {
          try {
            return await agent();
          } finally {
            span.end();
          }
        });
} catch (error) {
  out = { error: { status: error.status ?? null, type: error.error?.type ?? null, step: error.error?.step ?? null, message: error.message } };
} finally {
  instrumentation?.disable();
  await provider?.forceFlush();
  await loggerProvider?.forceFlush();
  await provider?.shutdown();
  await loggerProvider?.shutdown();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exitCode = out.error ? 1 : 0;
