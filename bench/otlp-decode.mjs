// Decode throughput of the OTLP wire layer alone (no normalize, no database): spans/s for
// requests of 512 spans (the BatchSpanProcessor default), each carrying a ~2 KB prompt and
// a ~1 KB answer plus the usual GenAI attributes. Run after `npm run build`:
//   node bench/otlp-decode.mjs [seconds-per-case]
import { decodeTraceRequest } from '../dist/src/otlp/decode.js';
import { otlpTypes } from '../dist/src/otlp/proto.js';

const SPANS_PER_REQUEST = 512;
const seconds = Number(process.argv[2] ?? 3);

const words = 'the weather in paris is mild with light rain towards the evening and a westerly wind '.repeat(40);
const prompt = JSON.stringify([
  { role: 'system', content: words.slice(0, 300) },
  { role: 'user', content: words.slice(0, 1700) },
]);
const answer = JSON.stringify([{ role: 'assistant', content: words.slice(0, 900) }]);

function span(i) {
  const id = (n, bytes) =>
    Buffer.from(
      n
        .toString(16)
        .padStart(bytes * 2, '0')
        .slice(-bytes * 2),
      'hex',
    );
  const str = (key, v) => ({ key, value: { stringValue: v } });
  const int = (key, v) => ({ key, value: { intValue: v } });
  return {
    traceId: id(0xabcdef0123 + Math.floor(i / 8), 16),
    spanId: id(0x1000 + i, 8),
    parentSpanId: id(0x1000 + i - (i % 8), 8),
    name: 'chat gpt-4o-mini',
    kind: 3,
    flags: 257,
    startTimeUnixNano: String(1796032240962000000n + BigInt(i) * 1000000n),
    endTimeUnixNano: String(1796032240982105970n + BigInt(i) * 1000000n),
    attributes: [
      str('gen_ai.operation.name', 'chat'),
      str('gen_ai.request.model', 'gpt-4o-mini'),
      str('gen_ai.system', 'openai'),
      str('server.address', '127.0.0.1'),
      int('server.port', 37305),
      int('gen_ai.request.max_tokens', 512),
      { key: 'gen_ai.request.temperature', value: { doubleValue: 0.2 } },
      { key: 'gen_ai.response.finish_reasons', value: { arrayValue: { values: [{ stringValue: 'stop' }] } } },
      str('gen_ai.response.id', `chatcmpl-${i}`),
      str('gen_ai.response.model', 'gpt-4o-mini-2024-07-18'),
      int('gen_ai.usage.input_tokens', 412),
      int('gen_ai.usage.output_tokens', 210),
      str('gen_ai.conversation.id', 'sess-bench'),
      str('gen_ai.input.messages', prompt),
      str('gen_ai.output.messages', answer),
    ],
    status: { code: 0 },
  };
}

const request = {
  resourceSpans: [
    {
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: 'bench-agent' } },
          { key: 'process.pid', value: { intValue: 4242 } },
        ],
      },
      scopeSpans: [
        {
          scope: { name: '@opentelemetry/instrumentation-openai', version: '0.21.0' },
          spans: Array.from({ length: SPANS_PER_REQUEST }, (_, i) => span(i)),
        },
      ],
    },
  ],
};

const { ExportTraceServiceRequest: T } = otlpTypes();
const protobufBody = T.encode(T.fromObject(request)).finish();
// The OTLP/JSON form, as the OTel JS HTTP exporter writes it: hex ids, string times, integer enums.
const jsonBody = Buffer.from(
  JSON.stringify(request, (_key, v) => {
    if (v && v.type === 'Buffer' && Array.isArray(v.data)) return Buffer.from(v.data).toString('hex');
    return v;
  }),
);

for (const [encoding, body] of [
  ['protobuf', protobufBody],
  ['json', jsonBody],
]) {
  const check = decodeTraceRequest(body, encoding);
  if (check.spans.length !== SPANS_PER_REQUEST || check.rejected.length)
    throw new Error(`bench request did not decode cleanly (${encoding})`);
  for (let i = 0; i < 20; i++) decodeTraceRequest(body, encoding); // warm up the JIT
  let spans = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(seconds * 1e9);
  while (process.hrtime.bigint() < deadline) spans += decodeTraceRequest(body, encoding).spans.length;
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const perSpan = body.length / SPANS_PER_REQUEST;
  console.log(
    `${encoding.padEnd(8)} ${Math.round(spans / elapsed)
      .toLocaleString('en-US')
      .padStart(
        9,
      )} spans/s  (${Math.round(perSpan)} B/span on the wire, ${((spans * perSpan) / elapsed / 1e6).toFixed(0)} MB/s)`,
  );
}
