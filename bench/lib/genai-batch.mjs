// Realistic GenAI export requests for the ingest bench: 512 spans per request by default (the
// BatchSpanProcessor default), made of whole agent runs of 8 spans each: an agent wrapper
// (the trace root), 4 chat calls and 3 tool executions, every span carrying the run's session
// id. Runs alternate between the OpenLLMetry layout (traceloop.* keys, as in
// test/fixtures/corpus/openllmetry-openai) and the OTel GenAI layout with messages on the span
// (invoke_agent / chat / execute_tool). Each chat span's gen_ai.input.messages holds a system
// prompt and a user prompt of `promptBytes` of English-like text, different per span, so TOAST
// compression sees realistic, not repetitive, text, and per request: the message store stores
// and indexes each request's prompts and answers as new ones, not as messages it holds. Its
// words follow natural language's frequencies (Zipf's law over a 20,000-word vocabulary, 147
// common English words at its head) so recall's index sees as many distinct words as in real
// text; BENCH_TEXT=uniform draws them evenly from the 147 words alone.
//
// Encoding a large protobuf request per request would cost the sender as much CPU as the
// server spends, on a small machine where every core counts. So one request is encoded once as a
// template, and each request sent is a copy with fresh trace ids, span ids, session ids and a
// fresh word in every prompt, answer and tool call id written over marker bytes at offsets
// found once, and its spans' times moved past those of the request before it, as the times of
// spans exported as they end move on.
import { randomBytes } from 'node:crypto';
import { otlpTypes } from '../../dist/src/otlp/proto.js';

export const SPANS_PER_REQUEST = 512;
export const SPANS_PER_RUN = 8;

// Markers: bytes that neither ASCII text nor the rest of the encoding produces in this order.
const TRACE_MARK = Buffer.from('c7a35e91d20b6f48', 'hex'); // first 8 bytes of every trace id
const SPAN_MARK = Buffer.from('e9b4f1a7', 'hex'); // first 4 bytes of every span id
const SESSION_MARK = Buffer.from('QZQZQZQZ', 'ascii'); // inside every session id string
// A word of every user prompt and answer and of every tool call id: rewritten per request, so
// each request's messages are new to the message store, as independent agents' prompts are
// (the system prompt stays the same in all, as an agent's does).
const MESSAGE_MARK = Buffer.from('QXQXQXQX', 'ascii');
const MESSAGE_WORD = MESSAGE_MARK.toString('ascii');

const WORDS = (
  'the a of to and in is for on with that this as are be by from at it or an was not have which ' +
  'model agent weather station river valley morning fog temperature forecast pressure humidity wind north south east ' +
  'west report summary customer order invoice account balance payment shipment warehouse delivery schedule meeting ' +
  'project deadline review document section paragraph figure table result analysis method data sample measurement ' +
  'error value function parameter request response server client database query index cache memory process thread ' +
  'network latency throughput budget estimate quarter revenue growth market product feature release version update ' +
  'policy security access token session user question answer context history previous following describe explain ' +
  'compare list provide include consider assume however therefore because although while during after before since ' +
  'city paris lyon berlin madrid tokyo london rain snow sun cloud storm mild cold warm dry wet light heavy evening'
).split(' ');

/** Vocabulary past WORDS: pronounceable made-up words, distinct, 6 to 11 letters. */
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tas',
  'vo',
  'pel',
  'dri',
  'sun',
  'mar',
  'tek',
  'bo',
  'fin',
  'gra',
  'hu',
  'jel',
  'ny',
  'qua',
  'zo',
  'wex',
];
const VOCABULARY = 20_000;
const rareWord = (i) => {
  const s = (k) => SYLLABLES[Math.floor(i / 20 ** k) % 20];
  return s(0) + s(1) + s(2) + (i >= 8000 ? s(3) : '');
};
const TEXT = process.env.BENCH_TEXT ?? 'natural';
if (TEXT !== 'natural' && TEXT !== 'uniform') throw new Error(`BENCH_TEXT: natural or uniform, not ${TEXT}`);
const UNIFORM = TEXT === 'uniform';

/** Deterministic English-like text of about `bytes` bytes, different for every seed. */
export function text(bytes, seed) {
  let x = (seed * 2654435761) >>> 0 || 1;
  const parts = [];
  let size = 0;
  let sentence = 0;
  while (size < bytes) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    let w;
    if (UNIFORM) {
      w = WORDS[x % WORDS.length];
    } else {
      // rank r with probability about 1/r (Zipf): r = VOCABULARY^u - 1 for u even in [0, 1)
      const rank = Math.floor(VOCABULARY ** ((x >>> 8) / 2 ** 24)) - 1;
      w = rank < WORDS.length ? WORDS[rank] : rareWord(rank);
    }
    if (sentence === 0) w = w[0].toUpperCase() + w.slice(1);
    sentence++;
    if (sentence > 8 + (x % 12)) {
      w += '.';
      sentence = 0;
    }
    parts.push(w);
    size += w.length + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

const SYSTEM =
  'You are a careful research assistant. Use the tools you are given to look facts up, cite what they return, and answer concisely.';

const str = (key, v) => ({ key, value: { stringValue: v } });
const int = (key, v) => ({ key, value: { intValue: v } });
const dbl = (key, v) => ({ key, value: { doubleValue: v } });
const arr = (key, vs) => ({ key, value: { arrayValue: { values: vs.map((v) => ({ stringValue: v })) } } });

function traceId(run) {
  const b = Buffer.alloc(16);
  TRACE_MARK.copy(b, 0);
  b.writeUInt32BE(run, 8);
  b.writeUInt32BE(0x5eed0001, 12);
  return b;
}

function spanId(n) {
  const b = Buffer.alloc(8);
  SPAN_MARK.copy(b, 0);
  b.writeUInt32BE(n + 1, 4);
  return b;
}

const T0 = 1796032240962000000n;
/** Each run starts this long after the one before it (its spans end within it). */
const RUN_NS = 10_000_000_000n;

/** One agent run: [root, chat, tool, chat, tool, chat, tool, chat]; `layout` picks the key family. */
function run(r, layout, promptBytes) {
  const session = `sess-${SESSION_MARK.toString('ascii')}-${String(r).padStart(4, '0')}`;
  const tid = traceId(r);
  const first = r * SPANS_PER_RUN;
  const rootId = spanId(first);
  const start = T0 + BigInt(r) * RUN_NS;
  const spans = [];
  const base = (i, name, kind, attributes, startOffsetMs, durationMs) => ({
    traceId: tid,
    spanId: spanId(first + i),
    parentSpanId: i === 0 ? Buffer.alloc(0) : rootId,
    name,
    kind,
    flags: 257,
    startTimeUnixNano: String(start + BigInt(startOffsetMs) * 1_000_000n),
    endTimeUnixNano: String(start + BigInt(startOffsetMs + durationMs) * 1_000_000n + 105_970n),
    attributes,
    status: { code: 0 },
  });
  const sessionKeys =
    layout === 'openllmetry'
      ? [
          str('gen_ai.conversation.id', session),
          str('traceloop.association.properties.session_id', session),
          str('traceloop.workflow.name', 'research_agent'),
          str('gen_ai.agent.name', 'research_agent'),
        ]
      : [str('gen_ai.conversation.id', session)];
  const answer = (c) => `${MESSAGE_WORD} ${text(291, r * 97 + c * 13 + 7)}`;

  if (layout === 'openllmetry') {
    spans.push(
      base(
        0,
        'research_agent.agent',
        1,
        [
          ...sessionKeys,
          str('traceloop.entity.name', 'research_agent'),
          str('traceloop.entity.path', ''),
          str('traceloop.span.kind', 'agent'),
          str('traceloop.entity.input', JSON.stringify({ args: [], kwargs: { question: text(200, r) } })),
          str('traceloop.entity.output', JSON.stringify(answer(9))),
        ],
        0,
        9000,
      ),
    );
  } else {
    spans.push(
      base(
        0,
        'invoke_agent research_agent',
        1,
        [
          ...sessionKeys,
          str('gen_ai.operation.name', 'invoke_agent'),
          str('gen_ai.agent.name', 'research_agent'),
          str('gen_ai.provider.name', 'openai'),
        ],
        0,
        9000,
      ),
    );
  }

  for (let c = 0; c < 4; c++) {
    const i = 1 + c * 2;
    const callId = `call_${r.toString(36)}x${c}${MESSAGE_WORD}`;
    const prompt = `${MESSAGE_WORD} ${text(promptBytes - SYSTEM.length - 209, r * 131 + c)}`;
    const input = [
      { role: 'system', parts: [{ type: 'text', content: SYSTEM }] },
      { role: 'user', parts: [{ type: 'text', content: prompt }] },
    ];
    const last = c === 3;
    const output = last
      ? [{ role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: answer(c) }] }]
      : [
          {
            role: 'assistant',
            finish_reason: 'tool_call',
            parts: [{ type: 'tool_call', id: callId, name: 'lookup', arguments: { query: text(40, r + c) } }],
          },
        ];
    const common = [
      str('gen_ai.provider.name', 'openai'),
      str('gen_ai.operation.name', 'chat'),
      str('gen_ai.request.model', 'gpt-4o-mini'),
      dbl('gen_ai.request.temperature', 0.2),
      int('gen_ai.request.max_tokens', 1024),
      str('gen_ai.input.messages', JSON.stringify(input)),
      str('gen_ai.output.messages', JSON.stringify(output)),
      str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
      str('gen_ai.response.id', `chatcmpl-${r}-${c}`),
      int('gen_ai.usage.input_tokens', Math.round(promptBytes / 4)),
      int('gen_ai.usage.output_tokens', last ? 80 : 12),
      arr('gen_ai.response.finish_reasons', [last ? 'stop' : 'tool_call']),
    ];
    spans.push(base(i, 'chat gpt-4o-mini', 3, [...common, ...sessionKeys], c * 2000, 1500));
    if (last) break;
    const args = JSON.stringify({ query: text(40, r + c) });
    const result = JSON.stringify({ source: 'kb', hits: [text(400, r * 7 + c)] });
    if (layout === 'openllmetry') {
      spans.push(
        base(
          i + 1,
          'lookup.tool',
          1,
          [
            ...sessionKeys,
            str('traceloop.entity.name', 'lookup'),
            str('traceloop.entity.path', ''),
            str('traceloop.span.kind', 'tool'),
            str('traceloop.entity.input', JSON.stringify({ args: [], kwargs: JSON.parse(args) })),
            str('traceloop.entity.output', result),
          ],
          c * 2000 + 1500,
          400,
        ),
      );
    } else {
      spans.push(
        base(
          i + 1,
          'execute_tool lookup',
          1,
          [
            ...sessionKeys,
            str('gen_ai.operation.name', 'execute_tool'),
            str('gen_ai.tool.name', 'lookup'),
            str('gen_ai.tool.call.id', callId),
            str('gen_ai.tool.call.arguments', args),
            str('gen_ai.tool.call.result', result),
          ],
          c * 2000 + 1500,
          400,
        ),
      );
    }
  }
  return spans;
}

/**
 * Where the template holds its spans' start and end times, and which: one pass over it for the
 * tag of Span.start_time_unix_nano (7) or end_time_unix_nano (8), fixed64, followed by one of
 * the request's times (8 bytes, little-endian).
 */
function timesOf(template, request) {
  const values = new Set();
  for (const rs of request.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans) values.add(BigInt(s.startTimeUnixNano)).add(BigInt(s.endTimeUnixNano));
  const start = (7 << 3) | 1;
  const end = (8 << 3) | 1;
  const at = [];
  const times = [];
  for (let i = 0; i + 9 <= template.length; i++) {
    if (template[i] !== start && template[i] !== end) continue;
    const v = template.readBigUInt64LE(i + 1);
    if (!values.has(v)) continue;
    at.push(i + 1);
    times.push(v);
    i += 8;
  }
  return { at, times };
}

function indexesOf(buffer, marker) {
  const out = [];
  for (let at = buffer.indexOf(marker); at !== -1; at = buffer.indexOf(marker, at + 1)) out.push(at);
  return out;
}

/**
 * A source of distinct export requests (protobuf bytes) of `spansPerRequest` spans (a multiple
 * of SPANS_PER_RUN) whose chat prompts are about `promptBytes` long.
 */
export function createBatchSource(promptBytes, spansPerRequest = SPANS_PER_REQUEST) {
  if (spansPerRequest % SPANS_PER_RUN !== 0 || spansPerRequest < 2 * SPANS_PER_RUN)
    throw new Error(`spans per request: a multiple of ${SPANS_PER_RUN}, at least ${2 * SPANS_PER_RUN}`);
  const runs = spansPerRequest / SPANS_PER_RUN;
  const layouts = ['openllmetry', 'otel-genai'];
  const byLayout = new Map(layouts.map((l) => [l, []]));
  for (let r = 0; r < runs; r++) byLayout.get(layouts[r % 2]).push(...run(r, layouts[r % 2], promptBytes));
  const resource = (attrs) => ({
    attributes: [
      str('service.name', 'research-agent'),
      str('telemetry.sdk.language', 'nodejs'),
      int('process.pid', 4242),
      ...attrs,
    ],
  });
  const request = {
    resourceSpans: [
      {
        resource: resource([]),
        scopeSpans: [
          {
            scope: { name: '@traceloop/instrumentation-openai', version: '0.27.0' },
            spans: byLayout.get('openllmetry').filter((s) => s.kind === 3),
          },
          {
            scope: { name: '@traceloop/node-server-sdk', version: '0.27.0' },
            spans: byLayout.get('openllmetry').filter((s) => s.kind !== 3),
          },
        ],
      },
      {
        resource: resource([str('deployment.environment.name', 'bench')]),
        scopeSpans: [
          {
            scope: { name: '@opentelemetry/instrumentation-openai', version: '0.21.0' },
            spans: byLayout.get('otel-genai').filter((s) => s.kind === 3),
          },
          {
            scope: { name: 'research-agent', version: '1.0.0' },
            spans: byLayout.get('otel-genai').filter((s) => s.kind !== 3),
          },
        ],
      },
    ],
  };
  const spanCount = request.resourceSpans.flatMap((rs) => rs.scopeSpans).reduce((n, ss) => n + ss.spans.length, 0);
  if (spanCount !== spansPerRequest) throw new Error(`bench batch has ${spanCount} spans, expected ${spansPerRequest}`);

  const { ExportTraceServiceRequest: T } = otlpTypes();
  const template = Buffer.from(T.encode(T.fromObject(request)).finish());
  const traceAt = indexesOf(template, TRACE_MARK);
  const spanAt = indexesOf(template, SPAN_MARK);
  const sessionAt = indexesOf(template, SESSION_MARK);
  const messageAt = indexesOf(template, MESSAGE_MARK);
  const { at: timeAt, times } = timesOf(template, request);
  const parents = spansPerRequest - runs;
  if (
    traceAt.length !== spansPerRequest ||
    spanAt.length !== spansPerRequest + parents ||
    sessionAt.length === 0 ||
    messageAt.length === 0 ||
    timeAt.length !== 2 * spansPerRequest
  ) {
    throw new Error(
      `bench template markers: ${traceAt.length} trace, ${spanAt.length} span, ${sessionAt.length} session, ${messageAt.length} message, ${timeAt.length} times`,
    );
  }
  // a request's runs take runs x RUN_NS; the next request's start after them
  const requestNs = BigInt(runs) * RUN_NS;
  let sent = 0n;
  return {
    bytes: template.length,
    spans: spansPerRequest,
    /** A new request: `into` (a buffer of `bytes` bytes from an earlier call) is reused. */
    next(into) {
      const body = into ?? Buffer.from(template);
      if (into) template.copy(body);
      const trace = randomBytes(8);
      const span = randomBytes(4);
      const session = Buffer.from(randomBytes(4).toString('hex'), 'ascii');
      for (const at of traceAt) trace.copy(body, at);
      for (const at of spanAt) span.copy(body, at);
      for (const at of sessionAt) session.copy(body, at);
      const word = Buffer.from(randomBytes(MESSAGE_MARK.length).map((b) => 97 + (b % 26)));
      for (const at of messageAt) word.copy(body, at);
      const later = sent++ * requestNs;
      for (let i = 0; i < timeAt.length; i++) body.writeBigUInt64LE(times[i] + later, timeAt[i]);
      return body;
    },
  };
}
