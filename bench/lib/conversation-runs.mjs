// Conversations as agents send them: a run of `calls` model calls where call k sends the
// system prompt and the whole history so far (user 1, assistant 1, ..., user k) and receives
// assistant k, every user and assistant message about `messageBytes` of English-like text
// (genai-batch.mjs's text, different for every message of every run). Each run is a trace: an
// agent span (the root, ending last) and its chat spans, all with the run's session id; runs
// alternate between the OpenLLMetry layout (traceloop.* keys) and OTel GenAI's, as
// genai-batch.mjs's do. Spans go out in export requests of at most 512 spans or about 4 MB of
// messages, in the order they end, several short runs to a request.
import { randomBytes } from 'node:crypto';
import { otlpTypes } from '../../dist/src/otlp/proto.js';
import { text } from './genai-batch.mjs';

const MAX_SPANS = 512;
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
const SYSTEM = 'You are a patient assistant. Keep to what the user said earlier in the conversation and answer fully.';
const CALL_NS = 2_000_000_000n;

const str = (key, v) => ({ key, value: { stringValue: v } });
const int = (key, v) => ({ key, value: { intValue: v } });
const message = (role, content) => JSON.stringify({ role, parts: [{ type: 'text', content }] });

/**
 * Export requests (protobuf bodies) for `runs` conversations of `calls` model calls each;
 * `firstSeed` keeps the messages of different batches distinct. Returns the requests in
 * order, each { body, spans }. With `history: false` each call sends the system prompt and its
 * own user message only (runs of many independent calls, for reading long tapes).
 */
export function conversationRequests({ runs, calls, messageBytes = 2048, firstSeed = 0, history = true }) {
  const { ExportTraceServiceRequest: T } = otlpTypes();
  const requests = [];
  let pending = { openllmetry: [], 'otel-genai': [] };
  let pendingSpans = 0;
  let pendingBytes = 0;
  const flush = () => {
    if (pendingSpans === 0) return;
    requests.push({ body: Buffer.from(T.encode(T.fromObject(request(pending))).finish()), spans: pendingSpans });
    pending = { openllmetry: [], 'otel-genai': [] };
    pendingSpans = 0;
    pendingBytes = 0;
  };
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  for (let r = 0; r < runs; r++) {
    const layout = r % 2 === 0 ? 'openllmetry' : 'otel-genai';
    const seed = (firstSeed + r) * 1009;
    const start = nowNs - BigInt(calls + 1) * CALL_NS;
    for (const { span, bytes } of runSpans({ layout, calls, messageBytes, seed, start, history })) {
      if (pendingSpans === MAX_SPANS || (pendingSpans > 0 && pendingBytes + bytes > MAX_REQUEST_BYTES)) flush();
      pending[layout].push(span);
      pendingSpans++;
      pendingBytes += bytes;
    }
  }
  flush();
  return requests;
}

function request(byLayout) {
  const resource = (attrs) => ({
    attributes: [str('service.name', 'chat-agent'), str('telemetry.sdk.language', 'nodejs'), ...attrs],
  });
  const scopes = (layout, model, other) =>
    [
      { scope: model, spans: byLayout[layout].filter((s) => s.kind === 3) },
      { scope: other, spans: byLayout[layout].filter((s) => s.kind !== 3) },
    ].filter((s) => s.spans.length > 0);
  return {
    resourceSpans: [
      {
        resource: resource([]),
        scopeSpans: scopes(
          'openllmetry',
          { name: '@traceloop/instrumentation-openai', version: '0.27.0' },
          { name: '@traceloop/node-server-sdk', version: '0.27.0' },
        ),
      },
      {
        resource: resource([str('deployment.environment.name', 'bench')]),
        scopeSpans: scopes(
          'otel-genai',
          { name: '@opentelemetry/instrumentation-openai', version: '0.21.0' },
          { name: 'chat-agent', version: '1.0.0' },
        ),
      },
    ].filter((rs) => rs.scopeSpans.length > 0),
  };
}

/** One run's spans in the order they end: the chat calls, then the agent span. */
function* runSpans({ layout, calls, messageBytes, seed, start, history: resend }) {
  const traceId = randomBytes(16);
  const rootId = randomBytes(8);
  const session = `conv-${traceId.toString('hex', 0, 6)}`;
  const sessionKeys =
    layout === 'openllmetry'
      ? [
          str('gen_ai.conversation.id', session),
          str('traceloop.association.properties.session_id', session),
          str('traceloop.workflow.name', 'chat_agent'),
        ]
      : [str('gen_ai.conversation.id', session)];
  const span = (spanId, name, kind, attributes, from, to) => ({
    traceId,
    spanId,
    parentSpanId: spanId === rootId ? Buffer.alloc(0) : rootId,
    name,
    kind,
    flags: 257,
    startTimeUnixNano: String(from),
    endTimeUnixNano: String(to),
    attributes,
    status: { code: 0 },
  });
  const history = [JSON.stringify({ role: 'system', parts: [{ type: 'text', content: SYSTEM }] })];
  for (let k = 0; k < calls; k++) {
    history.push(message('user', text(messageBytes, seed + 2 * k)));
    const input = `[${history.join(',')}]`;
    const answer = text(messageBytes, seed + 2 * k + 1);
    const output = `[${JSON.stringify({ role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: answer }] })}]`;
    history.push(message('assistant', answer));
    if (!resend) history.splice(1);
    const from = start + BigInt(k) * CALL_NS;
    yield {
      bytes: input.length + output.length,
      span: span(
        randomBytes(8),
        'chat gpt-4o-mini',
        3,
        [
          str('gen_ai.provider.name', 'openai'),
          str('gen_ai.operation.name', 'chat'),
          str('gen_ai.request.model', 'gpt-4o-mini'),
          str('gen_ai.input.messages', input),
          str('gen_ai.output.messages', output),
          str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
          str('gen_ai.response.id', `chatcmpl-${seed}-${k}`),
          int('gen_ai.usage.input_tokens', Math.round(input.length / 4)),
          int('gen_ai.usage.output_tokens', Math.round(answer.length / 4)),
          ...sessionKeys,
        ],
        from,
        from + CALL_NS / 2n,
      ),
    };
  }
  const end = start + BigInt(calls) * CALL_NS;
  const rootAttributes =
    layout === 'openllmetry'
      ? [
          ...sessionKeys,
          str('traceloop.entity.name', 'chat_agent'),
          str('traceloop.span.kind', 'agent'),
          str('traceloop.entity.input', JSON.stringify({ args: [], kwargs: { turns: calls } })),
        ]
      : [
          ...sessionKeys,
          str('gen_ai.operation.name', 'invoke_agent'),
          str('gen_ai.agent.name', 'chat_agent'),
          str('gen_ai.provider.name', 'openai'),
        ];
  const rootName = layout === 'openllmetry' ? 'chat_agent.agent' : 'invoke_agent chat_agent';
  yield { bytes: 0, span: span(rootId, rootName, 1, rootAttributes, start, end) };
}
