/**
 * Every AnyValue arm and every OTLP/JSON quirk reaches a SpanRecord intact, and the two
 * encodings of one request produce identical records.
 */
import { describe, expect, it } from 'vitest';
import { decodeLogsRequest, decodeTraceRequest } from '../../../src/otlp/decode.js';
import {
  hex,
  json,
  jsonSpan,
  logsRequestBytes,
  oneScope,
  PARENT_ID,
  pbSpan,
  SPAN_ID,
  TRACE_ID,
  traceRequestBytes,
} from './helpers.js';

// The same attributes in protobufjs form and in OTLP/JSON form.
const PB_ATTRIBUTES = [
  { key: 'str', value: { stringValue: 'héllo' } },
  { key: 'empty.str', value: { stringValue: '' } },
  { key: 'yes', value: { boolValue: true } },
  { key: 'no', value: { boolValue: false } },
  { key: 'int', value: { intValue: 42 } },
  { key: 'zero', value: { intValue: 0 } },
  { key: 'negative', value: { intValue: -7 } },
  { key: 'big', value: { intValue: '9223372036854775807' } },
  { key: 'big.negative', value: { intValue: '-9007199254740993' } },
  { key: 'max.safe', value: { intValue: '9007199254740991' } },
  { key: 'double', value: { doubleValue: 0.2 } },
  { key: 'array', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 1 }, { boolValue: true }, {}] } } },
  {
    key: 'kvlist',
    value: {
      kvlistValue: {
        values: [
          { key: 'role', value: { stringValue: 'user' } },
          { key: 'nested', value: { kvlistValue: { values: [{ key: 'n', value: { doubleValue: 1.5 } }] } } },
        ],
      },
    },
  },
  { key: 'bytes', value: { bytesValue: Buffer.from([0, 1, 2, 255]) } },
  { key: 'empty', value: {} },
  { key: 'absent' },
  { key: '__proto__', value: { stringValue: 'not a prototype' } },
];

const JSON_ATTRIBUTES = [
  { key: 'str', value: { stringValue: 'héllo' } },
  { key: 'empty.str', value: { stringValue: '' } },
  { key: 'yes', value: { boolValue: true } },
  { key: 'no', value: { boolValue: false } },
  { key: 'int', value: { intValue: 42 } }, // OTel JS writes numbers
  { key: 'zero', value: { intValue: '0' } }, // Go protojson writes strings
  { key: 'negative', value: { intValue: '-7' } },
  { key: 'big', value: { intValue: '9223372036854775807' } },
  { key: 'big.negative', value: { intValue: '-9007199254740993' } },
  { key: 'max.safe', value: { intValue: 9007199254740991 } },
  { key: 'double', value: { doubleValue: 0.2 } },
  {
    key: 'array',
    value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }, { boolValue: true }, {}] } },
  },
  {
    key: 'kvlist',
    value: {
      kvlistValue: {
        values: [
          { key: 'role', value: { stringValue: 'user' } },
          { key: 'nested', value: { kvlistValue: { values: [{ key: 'n', value: { doubleValue: 1.5 } }] } } },
        ],
      },
    },
  },
  { key: 'bytes', value: { bytesValue: Buffer.from([0, 1, 2, 255]).toString('base64') } },
  { key: 'empty', value: {} },
  { key: 'absent' },
  { key: '__proto__', value: { stringValue: 'not a prototype' } },
];

describe('AnyValue unwrapping', () => {
  const fromProtobuf = decodeTraceRequest(
    traceRequestBytes(oneScope([pbSpan({ attributes: PB_ATTRIBUTES })])),
    'protobuf',
  );
  const attrs = fromProtobuf.spans[0].attributes;

  it('keeps strings, booleans, doubles and safe integers as plain JS values', () => {
    expect(attrs.str).toBe('héllo');
    expect(attrs['empty.str']).toBe('');
    expect(attrs.yes).toBe(true);
    expect(attrs.no).toBe(false);
    expect(attrs.int).toBe(42);
    expect(attrs.zero).toBe(0);
    expect(attrs.negative).toBe(-7);
    expect(attrs['max.safe']).toBe(Number.MAX_SAFE_INTEGER);
    expect(attrs.double).toBe(0.2);
  });

  it('turns int64 values beyond 2^53 into exact bigints', () => {
    expect(attrs.big).toBe(9223372036854775807n);
    expect(attrs['big.negative']).toBe(-9007199254740993n);
  });

  it('unwraps arrays, nested kvlists and bytes, and reads an empty value as null', () => {
    expect(attrs.array).toEqual(['a', 1, true, null]);
    expect(attrs.kvlist).toEqual({ role: 'user', nested: { n: 1.5 } });
    expect(attrs.bytes).toEqual(new Uint8Array([0, 1, 2, 255]));
    expect(attrs.empty).toBeNull();
    expect(attrs.absent).toBeNull();
  });

  it('stores a "__proto__" key as data instead of changing the object prototype', () => {
    expect(Object.getPrototypeOf(attrs)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(attrs, '__proto__')?.value).toBe('not a prototype');
  });

  it('gives identical records from the OTLP/JSON form of the same request', () => {
    const fromJson = decodeTraceRequest(
      json({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
            scopeSpans: [
              { scope: { name: 'lib', version: '1.0.0' }, spans: [jsonSpan({ attributes: JSON_ATTRIBUTES })] },
            ],
          },
        ],
      }),
      'json',
    );
    expect(fromJson).toEqual(fromProtobuf);
  });
});

describe('span fields', () => {
  const full = {
    parentSpanId: hex(PARENT_ID),
    traceState: 'k=v',
    flags: 257,
    kind: 3,
    events: [
      {
        timeUnixNano: '1796032240970000000',
        name: 'exception',
        attributes: [{ key: 'exception.type', value: { stringValue: 'Error' } }],
        droppedAttributesCount: 1,
      },
    ],
    links: [{ traceId: hex(TRACE_ID), spanId: hex(PARENT_ID), traceState: 't', flags: 1, attributes: [] }],
    status: { code: 2, message: 'boom' },
    droppedAttributesCount: 2,
    droppedEventsCount: 3,
    droppedLinksCount: 4,
  };

  it('are read from protobuf with lower-case hex ids, bigint nanosecond times and named enums', () => {
    const { spans, rejected } = decodeTraceRequest(traceRequestBytes(oneScope([pbSpan(full)])), 'protobuf');
    expect(rejected).toEqual([]);
    expect(spans[0]).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      parentSpanId: PARENT_ID,
      traceState: 'k=v',
      flags: 257,
      name: 'op',
      kind: 'client',
      startTimeUnixNano: 1796032240962000000n,
      endTimeUnixNano: 1796032240982105970n,
      attributes: {},
      droppedAttributesCount: 2,
      events: [
        {
          timeUnixNano: 1796032240970000000n,
          name: 'exception',
          attributes: { 'exception.type': 'Error' },
          droppedAttributesCount: 1,
        },
      ],
      droppedEventsCount: 3,
      links: [
        { traceId: TRACE_ID, spanId: PARENT_ID, traceState: 't', attributes: {}, droppedAttributesCount: 0, flags: 1 },
      ],
      droppedLinksCount: 4,
      status: { code: 'error', message: 'boom' },
      resource: { 'service.name': 'svc' },
      resourceDroppedAttributesCount: 0,
      scope: { name: 'lib', version: '1.0.0', attributes: {} },
      serviceName: 'svc',
    });
  });

  it('read the same from OTLP/JSON with enum names, numeric times and snake_case keys', () => {
    const protobufSpans = decodeTraceRequest(traceRequestBytes(oneScope([pbSpan(full)])), 'protobuf').spans;
    const lenient = {
      trace_id: TRACE_ID,
      span_id: SPAN_ID.toUpperCase(),
      parent_span_id: PARENT_ID,
      trace_state: 'k=v',
      flags: 257,
      name: 'op',
      kind: 'SPAN_KIND_CLIENT',
      start_time_unix_nano: '1796032240962000000',
      endTimeUnixNano: '1796032240982105970',
      events: [
        {
          time_unix_nano: '1796032240970000000',
          name: 'exception',
          attributes: [{ key: 'exception.type', value: { string_value: 'Error' } }],
          dropped_attributes_count: 1,
        },
      ],
      links: [{ traceId: TRACE_ID, spanId: PARENT_ID, traceState: 't', flags: 1 }],
      status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
      droppedAttributesCount: 2,
      dropped_events_count: 3,
      droppedLinksCount: '4',
    };
    const body = {
      resource_spans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
          scope_spans: [{ scope: { name: 'lib', version: '1.0.0' }, spans: [lenient] }],
        },
      ],
    };
    expect(decodeTraceRequest(json(body), 'json').spans).toEqual(protobufSpans);
  });

  it('accept nanosecond times as JSON numbers as well as strings', () => {
    const { spans } = decodeTraceRequest(
      json({
        resourceSpans: [
          {
            scopeSpans: [
              { spans: [jsonSpan({ startTimeUnixNano: 1544712660000000000, endTimeUnixNano: '1544712661000000000' })] },
            ],
          },
        ],
      }),
      'json',
    );
    expect(spans[0].startTimeUnixNano).toBe(1544712660000000000n);
    expect(spans[0].endTimeUnixNano).toBe(1544712661000000000n);
  });

  it('treat an empty or all-zero parent span id as a root and a missing resource as no service', () => {
    const zeroParent = pbSpan({ parentSpanId: Buffer.alloc(8) });
    const { spans } = decodeTraceRequest(
      traceRequestBytes({ resourceSpans: [{ scopeSpans: [{ spans: [pbSpan(), zeroParent] }] }] }),
      'protobuf',
    );
    expect(spans.map((s) => s.parentSpanId)).toEqual([null, null]);
    expect(spans[0].serviceName).toBeNull();
    expect(spans[0].resource).toEqual({});
    expect(spans[0].scope).toEqual({ name: '', version: '', attributes: {} });
    expect(spans[0].status).toEqual({ code: 'unset', message: '' });
  });

  it('accept base64 ids from generic proto3-JSON encoders', () => {
    const span = jsonSpan({ traceId: hex(TRACE_ID).toString('base64'), spanId: hex(SPAN_ID).toString('base64') });
    const { spans } = decodeTraceRequest(json({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }), 'json');
    expect([spans[0].traceId, spans[0].spanId]).toEqual([TRACE_ID, SPAN_ID]);
  });

  it('decode an empty request to no spans', () => {
    expect(decodeTraceRequest(new Uint8Array(0), 'protobuf')).toEqual({ spans: [], rejected: [] });
    expect(decodeTraceRequest(json({}), 'json')).toEqual({ spans: [], rejected: [] });
  });
});

describe('log records', () => {
  const record = {
    timeUnixNano: '1796032240962000000',
    observedTimeUnixNano: '1796032240962000001',
    severityNumber: 9,
    severityText: 'INFO',
    body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'hi' } }] } },
    attributes: [{ key: 'event.name', value: { stringValue: 'gen_ai.user.message' } }],
    flags: 1,
    traceId: hex(TRACE_ID),
    spanId: hex(SPAN_ID),
  };

  it('take the event name from event_name first, then from the event.name attribute', () => {
    const request = {
      resourceLogs: [{ scopeLogs: [{ logRecords: [record, { ...record, eventName: 'gen_ai.choice' }] }] }],
    };
    const { logs } = decodeLogsRequest(logsRequestBytes(request), 'protobuf');
    expect(logs.map((l) => l.eventName)).toEqual(['gen_ai.user.message', 'gen_ai.choice']);
    expect(logs[0]).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      timeUnixNano: 1796032240962000000n,
      observedTimeUnixNano: 1796032240962000001n,
      severityNumber: 9,
      severityText: 'INFO',
      body: { content: 'hi' },
      flags: 1,
    });
  });

  it('keep records without trace or span id, with null ids', () => {
    const request = {
      resourceLogs: [{ scopeLogs: [{ logRecords: [{ ...record, traceId: undefined, spanId: Buffer.alloc(8) }] }] }],
    };
    const { logs, rejected } = decodeLogsRequest(logsRequestBytes(request), 'protobuf');
    expect(rejected).toEqual([]);
    expect([logs[0].traceId, logs[0].spanId]).toEqual([null, null]);
  });

  it('read the same from OTLP/JSON, severity given by name', () => {
    const jsonRecord = { ...record, severityNumber: 'SEVERITY_NUMBER_INFO', traceId: TRACE_ID, spanId: SPAN_ID };
    const fromJson = decodeLogsRequest(json({ resourceLogs: [{ scopeLogs: [{ logRecords: [jsonRecord] }] }] }), 'json');
    const fromProtobuf = decodeLogsRequest(
      logsRequestBytes({ resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }] }),
      'protobuf',
    );
    expect(fromJson).toEqual(fromProtobuf);
  });
});
