/**
 * NOTE: conformance of the OTLP front doors with the real OpenTelemetry exporters from npm.
 *
 * Scope: one set of spans, built by a real SDK tracer (@opentelemetry/sdk-trace-base), goes
 * through every door a sender can use: OTLPTraceExporter from exporter-trace-otlp-proto
 * (OTLP/HTTP protobuf), -http (OTLP/HTTP JSON) and -grpc, each plain and gzip-compressed, and
 * the in-process TapedeckSpanExporter (called directly, and under a BatchSpanProcessor). Each
 * door gets its own trace id and otherwise identical span content, so the rows each door
 * leaves in tapedeck.spans must be identical once trace id, run and received_at are set aside,
 * and must equal what the tracer was told: ids, exact nanosecond times, status, attributes of
 * every type the SDK can send (string, bool, int, double and arrays of each, with a null
 * element), events, links, trace state and flags, scope and resource attributes.
 *
 * kvlist and bytes values (and int64 beyond 2^53) cannot be made through the SDK API (it
 * drops them), so they arrive in hand-built OTLP/JSON and protobuf bodies instead.
 *
 * Not in scope here: decode edge cases (test/unit/otlp), bad input and limits
 * (test/integration/ingest-bad-input), delivery under failure (ingest-delivery,
 * ingest-database-unavailable).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type HrTime,
  type Link,
} from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type IdGenerator,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { TapedeckSpanExporter } from '../../src/exporter/tapedeck-span-exporter.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  grpcExport,
  JSON_TYPE,
  postOtlp,
  PROTOBUF,
  readExportResponse,
  readSpanRows,
  startTestTapedeck,
  type SpanRow,
  type TestTapedeck,
  START_TIMEOUT_MS,
} from '../helpers/tapedeck-server.js';

type Compression = NonNullable<NonNullable<ConstructorParameters<typeof ProtoExporter>[0]>['compression']>;
const GZIP = 'gzip' as Compression;

// ---------------------------------------------------------------------------------------
// The spans: every door sends these, under its own trace id.

/** Fixed ids: span ids are the same for every door; the trace id tells the doors apart. */
class FixedIds implements IdGenerator {
  private next = 0;
  constructor(private readonly traceId: string) {}
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    this.next++;
    return `5a${this.next.toString(16).padStart(14, '0')}`;
  }
}

const BASE_S = 1_700_000_000;
/** seconds after BASE_S plus nanoseconds: an HrTime the SDK keeps exactly */
const at = (s: number, ns: number): HrTime => [BASE_S + s, ns];
const nanos = ([s, ns]: HrTime): bigint => BigInt(s) * 1_000_000_000n + BigInt(ns);

const RESOURCE_ATTRIBUTES = {
  'service.name': 'conformance-agent',
  'service.version': '1.4.2',
  'deployment.environment.name': 'test',
  'host.cpu.count': 2,
  'process.ready': true,
  'sampling.ratio': 0.25,
  'team.tags': ['search', 'agents'],
} satisfies Attributes;

/** Every attribute value type the SDK API accepts and sends. */
const EVERY_TYPE = {
  str: 'hello, wörld ✓',
  'str.empty': '',
  'bool.true': true,
  'bool.false': false,
  'int.small': 42,
  'int.negative': -7,
  'int.zero': 0,
  'int.max-safe': Number.MAX_SAFE_INTEGER,
  double: 3.25,
  'double.negative': -0.001,
  'arr.str': ['a', 'b', ''],
  'arr.bool': [true, false],
  'arr.int': [1, -2, 3],
  'arr.double': [1.5, -2.25],
  'arr.empty': [],
  'arr.with-null': ['x', null, 'y'],
} satisfies Attributes;

const EXTERNAL_TRACE = 'e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1';
const EXTERNAL_SPAN = 'e2e2e2e2e2e2e2e2';
const REMOTE_PARENT = 'abcdef0123456789';

interface ExpectedSpan {
  name: string;
  span_id: string;
  parent_span_id: string | null;
  kind: string;
  start_ns: bigint;
  end_ns: bigint;
  status_code: string;
  status_message: string;
  attributes: Record<string, unknown>;
  events: unknown[];
  links: unknown[];
  trace_state: string;
  flags: bigint;
}

const T = {
  root: [at(0, 123_456_789), at(5, 987_654_321)],
  llm: [at(1, 1), at(2, 999_999_999)],
  tool: [at(3, 500_000_001), at(3, 500_000_002)],
  remote: [at(4, 0), at(4, 7)],
  producer: [at(4, 100), at(4, 200)],
} satisfies Record<string, [HrTime, HrTime]>;
const EVENT_TIMES = { started: at(0, 200_000_001), exception: at(2, 1) };

/** Runs the tracer once for one door; returns the finished spans in end order. */
function buildSpans(traceId: string): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(RESOURCE_ATTRIBUTES),
    idGenerator: new FixedIds(traceId),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('tapedeck-conformance', '2.0.1');

  const root = tracer.startSpan(
    'agent.run',
    { kind: SpanKind.SERVER, startTime: T.root[0], attributes: EVERY_TYPE },
    ROOT_CONTEXT,
  );
  root.addEvent('run.started', { step: 1, note: 'first', weights: [0.5, 0.5] }, EVENT_TIMES.started);
  const inRoot = trace.setSpan(ROOT_CONTEXT, root);

  const externalLink: Link = {
    context: {
      traceId: EXTERNAL_TRACE,
      spanId: EXTERNAL_SPAN,
      traceFlags: 1,
      isRemote: true,
      traceState: createTraceState('ext=1'),
    },
    attributes: { 'link.reason': 'retry-of', 'link.attempt': 2 },
  };
  const llm = tracer.startSpan(
    'llm.call',
    { kind: SpanKind.CLIENT, startTime: T.llm[0], links: [externalLink] },
    inRoot,
  );
  llm.setAttributes({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-test',
    'gen_ai.usage.input_tokens': 12,
  });
  llm.addEvent(
    'exception',
    { 'exception.type': 'RateLimitError', 'exception.message': 'slow down' },
    EVENT_TIMES.exception,
  );
  llm.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
  llm.end(T.llm[1]);

  const tool = tracer.startSpan(
    'tool.call',
    { kind: SpanKind.INTERNAL, startTime: T.tool[0], attributes: { 'arr.int': [7, 8, 9] } },
    inRoot,
  );
  tool.setStatus({ code: SpanStatusCode.OK });
  tool.end(T.tool[1]);
  root.setStatus({ code: SpanStatusCode.OK });
  root.end(T.root[1]);

  // A span whose parent lives in another process: trace state and the is-remote flag.
  const remoteParent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: REMOTE_PARENT,
    traceFlags: 1,
    isRemote: true,
    traceState: createTraceState('vendor=opaque,other=1'),
  });
  const consumer = tracer.startSpan('queue.receive', { kind: SpanKind.CONSUMER, startTime: T.remote[0] }, remoteParent);
  consumer.end(T.remote[1]);
  const producer = tracer.startSpan(
    'queue.send',
    { kind: SpanKind.PRODUCER, startTime: T.producer[0] },
    context.active(),
  );
  producer.end(T.producer[1]);

  const spans = memory.getFinishedSpans();
  void provider.shutdown();
  return spans;
}

/** What every door must store (span ids as FixedIds hands them out: root 1, llm 2, tool 3, ...). */
function expectedSpans(): ExpectedSpan[] {
  const id = (n: number) => `5a${n.toString(16).padStart(14, '0')}`;
  const base = { status_message: '', attributes: {}, events: [], links: [], trace_state: '', flags: 0x101n };
  return [
    {
      ...base,
      name: 'agent.run',
      span_id: id(1),
      parent_span_id: null,
      kind: 'server',
      start_ns: nanos(T.root[0]),
      end_ns: nanos(T.root[1]),
      status_code: 'ok',
      attributes: EVERY_TYPE,
      events: [
        {
          name: 'run.started',
          time_unix_nano: nanos(EVENT_TIMES.started).toString(),
          dropped_attributes_count: 0,
          attributes: { step: 1, note: 'first', weights: [0.5, 0.5] },
        },
      ],
    },
    {
      ...base,
      name: 'llm.call',
      span_id: id(2),
      parent_span_id: id(1),
      kind: 'client',
      start_ns: nanos(T.llm[0]),
      end_ns: nanos(T.llm[1]),
      status_code: 'error',
      status_message: 'rate limited',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.usage.input_tokens': 12,
      },
      events: [
        {
          name: 'exception',
          time_unix_nano: nanos(EVENT_TIMES.exception).toString(),
          dropped_attributes_count: 0,
          attributes: { 'exception.type': 'RateLimitError', 'exception.message': 'slow down' },
        },
      ],
      links: [
        {
          trace_id: EXTERNAL_TRACE,
          span_id: EXTERNAL_SPAN,
          trace_state: 'ext=1',
          dropped_attributes_count: 0,
          attributes: { 'link.reason': 'retry-of', 'link.attempt': 2 },
          flags: 0x301,
        },
      ],
    },
    {
      ...base,
      name: 'tool.call',
      span_id: id(3),
      parent_span_id: id(1),
      kind: 'internal',
      start_ns: nanos(T.tool[0]),
      end_ns: nanos(T.tool[1]),
      status_code: 'ok',
      attributes: { 'arr.int': [7, 8, 9] },
    },
    {
      ...base,
      name: 'queue.receive',
      span_id: id(4),
      parent_span_id: REMOTE_PARENT,
      kind: 'consumer',
      start_ns: nanos(T.remote[0]),
      end_ns: nanos(T.remote[1]),
      status_code: 'unset',
      trace_state: 'vendor=opaque,other=1',
      flags: 0x301n,
    },
    {
      ...base,
      name: 'queue.send',
      span_id: id(5),
      parent_span_id: null,
      kind: 'producer',
      start_ns: nanos(T.producer[0]),
      end_ns: nanos(T.producer[1]),
      status_code: 'unset',
    },
  ];
}

// ---------------------------------------------------------------------------------------
// The doors

interface Door {
  name: string;
  /** sends the spans; resolves with the exporter's result */
  send(t: TestTapedeck, spans: ReadableSpan[]): Promise<ExportResult>;
}

function exportOnce(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise<ExportResult>((resolve) => exporter.export(spans, resolve)).finally(() => exporter.shutdown());
}

const doors: Door[] = [
  {
    name: 'exporter-trace-otlp-proto',
    send: (t, s) => exportOnce(new ProtoExporter({ url: `${t.url}/v1/traces` }), s),
  },
  {
    name: 'exporter-trace-otlp-proto, gzip',
    send: (t, s) => exportOnce(new ProtoExporter({ url: `${t.url}/v1/traces`, compression: GZIP }), s),
  },
  {
    name: 'exporter-trace-otlp-http (JSON)',
    send: (t, s) => exportOnce(new JsonExporter({ url: `${t.url}/v1/traces` }), s),
  },
  {
    name: 'exporter-trace-otlp-http (JSON), gzip',
    send: (t, s) => exportOnce(new JsonExporter({ url: `${t.url}/v1/traces`, compression: GZIP }), s),
  },
  { name: 'exporter-trace-otlp-grpc', send: (t, s) => exportOnce(new GrpcExporter({ url: t.grpcUrl }), s) },
  {
    name: 'exporter-trace-otlp-grpc, gzip',
    send: (t, s) => exportOnce(new GrpcExporter({ url: t.grpcUrl, compression: GZIP }), s),
  },
  { name: 'TapedeckSpanExporter', send: (t, s) => exportOnce(new TapedeckSpanExporter({ store: t.running.store }), s) },
  {
    name: 'TapedeckSpanExporter under a BatchSpanProcessor',
    async send(t, spans) {
      const exporter = new TapedeckSpanExporter({ store: t.running.store });
      let result: ExportResult = { code: ExportResultCode.FAILED, error: new Error('never exported') };
      const watched: SpanExporter = {
        export: (batch, done) =>
          exporter.export(batch, (r) => {
            result = r;
            done(r);
          }),
        shutdown: () => exporter.shutdown(),
        forceFlush: () => exporter.forceFlush(),
      };
      const processor = new BatchSpanProcessor(watched, { scheduledDelayMillis: 10 });
      for (const span of spans) processor.onEnd(span);
      await processor.forceFlush();
      await processor.shutdown();
      return result;
    },
  },
];

const traceIdOf = (doorIndex: number) => `c0ffee${(doorIndex + 1).toString(16).padStart(2, '0')}${'0'.repeat(23)}1`;

/** A row with what legitimately differs between doors set aside. */
function doorIndependent(row: SpanRow): SpanRow {
  const { trace_id: _trace, run: _run, received_at: _received, ...rest } = row;
  return rest;
}

function spansThroughEveryDoor(server: () => TestTapedeck): void {
  const rowsByDoor = new Map<string, SpanRow[]>();

  describe.each(doors.map((door, i) => [door.name, door, traceIdOf(i)] as const))(
    'through %s',
    (_name, door, traceId) => {
      it('are acknowledged and stored exactly once, each field as the tracer recorded it', async () => {
        // arrange
        const spans = buildSpans(traceId);
        expect(spans).toHaveLength(5);
        // act
        const result = await door.send(server(), spans);
        // assert
        expect(result.error).toBeUndefined();
        expect(result.code).toBe(ExportResultCode.SUCCESS);
        const rows = await readSpanRows(server().db, [traceId]);
        rowsByDoor.set(door.name, rows);
        const expected = expectedSpans();
        expect(rows.map((r) => r.span_id).sort()).toEqual(expected.map((e) => e.span_id).sort());
        for (const e of expected) {
          const row = rows.find((r) => r.span_id === e.span_id)!;
          expect(row, e.name).toMatchObject({
            ...e,
            trace_id: traceId,
            scope_name: 'tapedeck-conformance',
            scope_version: '2.0.1',
            service_name: 'conformance-agent',
          });
          // toMatchObject allows extra keys inside objects; these must be exactly what was sent.
          expect(row.attributes, e.name).toEqual(e.attributes);
          expect(row.events, e.name).toEqual(e.events);
          expect(row.links, e.name).toEqual(e.links);
          expect(row.resource_attributes, e.name).toEqual(RESOURCE_ATTRIBUTES);
          expect(row.scope_attributes, e.name).toEqual({});
          expect(row).toMatchObject({
            dropped_attributes_count: 0,
            dropped_events_count: 0,
            dropped_links_count: 0,
            tenant: null,
          });
          expect(row.duration_ns).toBe(e.end_ns - e.start_ns);
        }
      });
    },
  );

  it('leaves identical rows whichever door the spans came through', () => {
    // Needs every door's test above to have run (vitest runs a file's tests in order).
    expect([...rowsByDoor.keys()]).toEqual(doors.map((d) => d.name));
    const [first, ...others] = doors.map((d) => rowsByDoor.get(d.name)!.map(doorIndependent));
    for (const [i, rows] of others.entries()) expect(rows, doors[i + 1].name).toEqual(first);
  });
}

// ---------------------------------------------------------------------------------------
// kvlist, bytes and int64: values the SDK API cannot make

const KV_TRACE = {
  json: 'b17e5b17e5b17e5b17e5b17e5b17e501',
  protobuf: 'b17e5b17e5b17e5b17e5b17e5b17e502',
  grpc: 'b17e5b17e5b17e5b17e5b17e5b17e503',
};
const KV_SPAN = '0102030405060708';
const BYTES = Buffer.from([0x00, 0x01, 0xfe, 0xff, 0x80]);

/** The same span in both encodings' own idiom (hex ids and base64 bytes in JSON). */
function jsonBody(traceId: string): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'kv-svc' } },
            { key: 'res.bytes', value: { bytesValue: BYTES.toString('base64') } },
          ],
        },
        scopeSpans: [
          {
            scope: {
              name: 'hand-built',
              version: '0',
              attributes: [
                { key: 'scope.kv', value: { kvlistValue: { values: [{ key: 'x', value: { boolValue: true } }] } } },
              ],
            },
            spans: [
              {
                traceId,
                spanId: KV_SPAN,
                name: 'values.sdk.cannot.make',
                kind: 1,
                startTimeUnixNano: '1700000000000000001',
                endTimeUnixNano: '1700000000000000002',
                attributes: [
                  {
                    key: 'kv',
                    value: {
                      kvlistValue: {
                        values: [
                          { key: 'name', value: { stringValue: 'n' } },
                          { key: 'count', value: { intValue: '3' } },
                          {
                            key: 'nested',
                            value: {
                              kvlistValue: {
                                values: [
                                  {
                                    key: 'deep',
                                    value: { arrayValue: { values: [{ doubleValue: 1.5 }, { boolValue: false }] } },
                                  },
                                ],
                              },
                            },
                          },
                        ],
                      },
                    },
                  },
                  { key: 'kv.empty', value: { kvlistValue: {} } },
                  { key: 'bytes', value: { bytesValue: BYTES.toString('base64') } },
                  { key: 'bytes.empty', value: { bytesValue: '' } },
                  {
                    key: 'arr.mixed',
                    value: {
                      arrayValue: {
                        values: [{ stringValue: 's' }, { intValue: 1 }, { bytesValue: BYTES.toString('base64') }],
                      },
                    },
                  },
                  { key: 'int.beyond-2^53', value: { intValue: '9007199254740993' } },
                  { key: 'int.min', value: { intValue: '-9223372036854775808' } },
                ],
                status: { code: 2, message: 'hand-built' },
              },
            ],
          },
        ],
      },
    ],
  });
}

function protobufBody(traceId: string): Uint8Array {
  const { ExportTraceServiceRequest: R } = otlpTypes();
  const kv = (key: string, value: object) => ({ key, value });
  return R.encode(
    R.fromObject({
      resourceSpans: [
        {
          resource: {
            attributes: [kv('service.name', { stringValue: 'kv-svc' }), kv('res.bytes', { bytesValue: BYTES })],
          },
          scopeSpans: [
            {
              scope: {
                name: 'hand-built',
                version: '0',
                attributes: [kv('scope.kv', { kvlistValue: { values: [kv('x', { boolValue: true })] } })],
              },
              spans: [
                {
                  traceId: Buffer.from(traceId, 'hex'),
                  spanId: Buffer.from(KV_SPAN, 'hex'),
                  name: 'values.sdk.cannot.make',
                  kind: 1,
                  startTimeUnixNano: '1700000000000000001',
                  endTimeUnixNano: '1700000000000000002',
                  attributes: [
                    kv('kv', {
                      kvlistValue: {
                        values: [
                          kv('name', { stringValue: 'n' }),
                          kv('count', { intValue: 3 }),
                          kv('nested', {
                            kvlistValue: {
                              values: [
                                kv('deep', { arrayValue: { values: [{ doubleValue: 1.5 }, { boolValue: false }] } }),
                              ],
                            },
                          }),
                        ],
                      },
                    }),
                    kv('kv.empty', { kvlistValue: {} }),
                    kv('bytes', { bytesValue: BYTES }),
                    kv('bytes.empty', { bytesValue: Buffer.alloc(0) }),
                    kv('arr.mixed', {
                      arrayValue: { values: [{ stringValue: 's' }, { intValue: 1 }, { bytesValue: BYTES }] },
                    }),
                    kv('int.beyond-2^53', { intValue: '9007199254740993' }),
                    kv('int.min', { intValue: '-9223372036854775808' }),
                  ],
                  status: { code: 2, message: 'hand-built' },
                },
              ],
            },
          ],
        },
      ],
    }),
  ).finish();
}

function valuesTheSdkCannotMake(server: () => TestTapedeck): void {
  const sends = [
    ['OTLP/HTTP JSON', KV_TRACE.json, async () => postOtlp(server(), 'traces', jsonBody(KV_TRACE.json), JSON_TYPE)],
    [
      'OTLP/HTTP protobuf',
      KV_TRACE.protobuf,
      async () => postOtlp(server(), 'traces', protobufBody(KV_TRACE.protobuf), PROTOBUF),
    ],
    [
      'OTLP/gRPC',
      KV_TRACE.grpc,
      async () => {
        const answer = await grpcExport(server().grpcAddress, 'traces', protobufBody(KV_TRACE.grpc));
        return {
          status: answer.code === 0 ? 200 : 500,
          body: answer.response ?? Buffer.alloc(0),
          details: answer.details,
        };
      },
    ],
  ] as const;

  it.each(sends)(
    'arrive intact through %s: kvlist as an object, bytes as base64 text, int64 exact',
    async (_door, traceId, send) => {
      // act
      const answer = await send();
      // assert
      expect(answer.status).toBe(200);
      const encoding = _door === 'OTLP/HTTP JSON' ? 'json' : 'protobuf';
      expect(readExportResponse('traces', answer.body, encoding)).toEqual({ rejected: 0, errorMessage: '' });
      const [row] = await readSpanRows(server().db, [traceId]);
      expect(row).toMatchObject({
        span_id: KV_SPAN,
        start_ns: 1_700_000_000_000_000_001n,
        end_ns: 1_700_000_000_000_000_002n,
        status_code: 'error',
        scope_attributes: { 'scope.kv': { x: true } },
        // jsonb has no bytes type: bytes are stored as their base64 text, the OTLP/JSON form.
        resource_attributes: { 'service.name': 'kv-svc', 'res.bytes': BYTES.toString('base64') },
      });
      const attributes = row.attributes as Record<string, unknown>;
      expect(attributes.kv).toEqual({ name: 'n', count: 3, nested: { deep: [1.5, false] } });
      expect(attributes['kv.empty']).toEqual({});
      expect(attributes.bytes).toBe('AAH+/4A=');
      expect(attributes['bytes.empty']).toBe('');
      expect(attributes['arr.mixed']).toEqual(['s', 1, 'AAH+/4A=']);
      // A JSON reader rounds integers beyond 2^53; the stored jsonb number is exact.
      const [exact] = await server().db.query<{ big: string; min: string }>(
        `SELECT attributes->>'int.beyond-2^53' AS big, attributes->>'int.min' AS min FROM tapedeck.spans WHERE trace_id = $1`,
        [traceId],
      );
      expect(exact).toEqual({ big: '9007199254740993', min: '-9223372036854775808' });
    },
  );

  it('stores the same row whichever encoding carried those values', async () => {
    const rows = await readSpanRows(server().db, Object.values(KV_TRACE));
    expect(rows).toHaveLength(3);
    const [first, ...rest] = rows.map(doorIndependent);
    for (const r of rest) expect(r).toEqual(first);
  });
}

describe.each(databaseKinds)('ingest conformance (%s)', (kind) => {
  let t: TestTapedeck;
  beforeAll(async () => {
    t = await startTestTapedeck(kind);
  }, START_TIMEOUT_MS);
  afterAll(async () => t?.close());

  describe('spans sent through every front door', () => spansThroughEveryDoor(() => t));
  describe('kvlist, bytes and 64-bit int attribute values', () => valuesTheSdkCannotMake(() => t));
});
