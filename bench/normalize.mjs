// Normalizer throughput on one core: corpus-shaped spans (the weather agent's span mix from
// the OpenLLMetry, OpenInference and OTel GenAI captures) with ~2 KB prompts.
// Build first:  npx tsc -p tsconfig.build.json   then:  node bench/normalize.mjs
// Prints spans/s for normalizeSpan alone and for normalizeSpan + finishStep (digests), the
// work ingest does per span before offload and storage.
import { normalizeSpan } from '../dist/src/normalize/normalize.js';
import { finishStep } from '../dist/src/normalize/finish.js';

const PROMPT = 'The river station recorded morning fog over the valley while temperatures rose slowly. '
  .repeat(24)
  .slice(0, 2048);
const SYSTEM =
  'You are a concise weather assistant. Use the get_weather tool for current conditions, then answer in one sentence.';
const TRACE = 'd93b298b18b3960b7b36ab754d1e8c5d';
const j = JSON.stringify;
let seq = 0;

function span(name, attributes, extra = {}) {
  seq++;
  return {
    traceId: TRACE,
    spanId: seq.toString(16).padStart(16, '0'),
    parentSpanId: 'd8ff40aec4347804',
    traceState: '',
    flags: 1,
    name,
    kind: 'internal',
    startTimeUnixNano: 1796032240962000000n + BigInt(seq),
    endTimeUnixNano: 1796032240982105970n + BigInt(seq),
    attributes,
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: 'unset', message: '' },
    resource: { 'service.name': 'weather-agent' },
    resourceDroppedAttributesCount: 0,
    scope: { name: extra.scope ?? 'test', version: '1', attributes: {} },
    serviceName: 'weather-agent',
  };
}

const toolCall = {
  type: 'tool_call',
  id: 'call_c6F7hirVaDiRrpZX1hnHmtWI',
  name: 'get_weather',
  arguments: { city: 'Paris' },
};
const result = '{"city":"Paris","temperature_c":18,"condition":"partly cloudy","humidity_pct":62}';
const session = {
  'gen_ai.conversation.id': 'sess-1',
  'traceloop.association.properties.session_id': 'sess-1',
  'traceloop.workflow.name': 'weather_agent',
  'gen_ai.agent.name': 'weather_agent',
};

const traceloopChat = span(
  'chat gpt-4o-mini',
  {
    'gen_ai.provider.name': 'openai',
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.request.temperature': 0.2,
    ...session,
    'gen_ai.input.messages': j([
      { role: 'system', parts: [{ type: 'text', content: SYSTEM }] },
      { role: 'user', parts: [{ type: 'text', content: PROMPT }] },
      { role: 'assistant', parts: [toolCall] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: toolCall.id, response: result }] },
    ]),
    'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
    'gen_ai.usage.input_tokens': 600,
    'gen_ai.usage.output_tokens': 17,
    'gen_ai.response.finish_reasons': ['stop'],
    'gen_ai.output.messages': j([
      {
        role: 'assistant',
        finish_reason: 'stop',
        parts: [{ type: 'text', content: 'It is 18°C and partly cloudy in Paris.' }],
      },
    ]),
  },
  { scope: '@traceloop/instrumentation-openai' },
);
const traceloopTool = span(
  'get_weather.tool',
  {
    ...session,
    'traceloop.span.kind': 'tool',
    'traceloop.entity.name': 'get_weather',
    'traceloop.entity.path': '',
    'traceloop.entity.input': '{"args":[],"kwargs":{"city":"Paris"}}',
    'traceloop.entity.output': result,
  },
  { scope: '@traceloop/node-server-sdk' },
);
const traceloopWorkflow = span(
  'weather_workflow.workflow',
  { ...session, 'traceloop.span.kind': 'workflow', 'traceloop.entity.name': 'weather_workflow' },
  { scope: '@traceloop/node-server-sdk' },
);

const body = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: PROMPT },
  ],
  temperature: 0.2,
  max_completion_tokens: 512,
};
const oiLlm = span(
  'OpenAI Chat Completions',
  {
    'session.id': 'sess-1',
    'openinference.span.kind': 'LLM',
    'llm.model_name': 'gpt-4o-mini-2024-07-18',
    'input.value': j(body),
    'input.mime_type': 'application/json',
    'llm.invocation_parameters': j({ model: 'gpt-4o-mini', temperature: 0.2, max_completion_tokens: 512 }),
    'llm.system': 'openai',
    'llm.input_messages.0.message.role': 'system',
    'llm.input_messages.0.message.content': SYSTEM,
    'llm.input_messages.1.message.role': 'user',
    'llm.input_messages.1.message.content': PROMPT,
    'output.value': j({
      id: 'chatcmpl-1',
      model: 'gpt-4o-mini-2024-07-18',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: toolCall.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    }),
    'output.mime_type': 'application/json',
    'llm.output_messages.0.message.role': 'assistant',
    'llm.output_messages.0.message.tool_calls.0.tool_call.id': toolCall.id,
    'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
    'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
    'llm.finish_reason': 'tool_calls',
    'llm.token_count.prompt': 600,
    'llm.token_count.completion': 7,
    'llm.token_count.total': 607,
    'llm.token_count.prompt_details.cache_read': 0,
  },
  { scope: '@arizeai/openinference-instrumentation-openai' },
);
const oiTool = span('get_weather', {
  'session.id': 'sess-1',
  'openinference.span.kind': 'TOOL',
  'input.value': '{"city":"Paris"}',
  'input.mime_type': 'application/json',
  'output.value': result,
  'output.mime_type': 'application/json',
});

const otelChat = span(
  'chat gpt-4o-mini',
  {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.system': 'openai',
    'gen_ai.request.max_tokens': 512,
    'gen_ai.response.finish_reasons': ['stop'],
    'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
    'gen_ai.usage.input_tokens': 600,
    'gen_ai.usage.output_tokens': 17,
  },
  { scope: '@opentelemetry/instrumentation-openai' },
);
const logRecord = (event, b) => ({
  traceId: TRACE,
  spanId: otelChat.spanId,
  timeUnixNano: 0n,
  observedTimeUnixNano: 0n,
  severityNumber: 9,
  severityText: '',
  eventName: null,
  body: b,
  attributes: { 'event.name': event, 'gen_ai.system': 'openai' },
  droppedAttributesCount: 0,
  flags: 1,
  resource: {},
  scope: { name: '@opentelemetry/instrumentation-openai', version: '0.21.0', attributes: {} },
  serviceName: null,
});
const otelLogs = [
  logRecord('gen_ai.system.message', { content: SYSTEM }),
  logRecord('gen_ai.user.message', { content: PROMPT }),
  logRecord('gen_ai.assistant.message', {
    tool_calls: [
      { id: toolCall.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ],
  }),
  logRecord('gen_ai.tool.message', { id: toolCall.id, content: result }),
  logRecord('gen_ai.choice', {
    index: 0,
    finish_reason: 'stop',
    message: { content: 'It is 18°C and partly cloudy in Paris.' },
  }),
];
const otelTool = span('execute_tool get_weather', {
  'gen_ai.operation.name': 'execute_tool',
  'gen_ai.tool.name': 'get_weather',
  'gen_ai.tool.call.id': toolCall.id,
  'gen_ai.tool.call.arguments': '{"city":"Paris"}',
  'gen_ai.tool.call.result': result,
});
const httpSpan = span('POST', {
  'http.request.method': 'POST',
  'url.full': 'http://127.0.0.1/v1/chat/completions',
  'http.response.status_code': 200,
});

// The corpus mix: per weather run, two model calls, one tool, one wrapper or agent, some context.
const MIX = [
  [traceloopChat, []],
  [traceloopChat, []],
  [traceloopTool, []],
  [traceloopWorkflow, []],
  [oiLlm, []],
  [oiLlm, []],
  [oiTool, []],
  [otelChat, otelLogs],
  [otelChat, otelLogs],
  [otelTool, []],
  [httpSpan, []],
];

function run(label, fn, seconds = 2) {
  for (let i = 0; i < 2000; i++) fn(MIX[i % MIX.length]); // warm up
  let n = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(seconds * 1e9);
  while (process.hrtime.bigint() < deadline) {
    for (let i = 0; i < MIX.length * 50; i++) fn(MIX[i % MIX.length]);
    n += MIX.length * 50;
  }
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(
    `${label.padEnd(36)} ${Math.round(n / secs)
      .toLocaleString('en-US')
      .padStart(10)} spans/s  (${n} spans, ${secs.toFixed(2)} s, one core)`,
  );
}

console.log(`node ${process.version}; span mix of ${MIX.length}, prompts ${PROMPT.length} chars`);
run('normalizeSpan', ([s, logs]) => normalizeSpan(s, logs));
run('normalizeSpan + finishStep (digests)', ([s, logs]) => {
  const f = normalizeSpan(s, logs);
  if (f.step) finishStep(f.step);
});
