/**
 * A body that cannot be read is refused whole with a message naming what was wrong; a span
 * or log record with unusable ids is rejected alone, by position, while the rest decode.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeLogsRequest, decodeTraceRequest, OtlpDecodeError } from '../../../src/otlp/decode.js';
import { IngestError } from '../../../src/errors.js';
import {
  hex,
  json,
  jsonSpan,
  logsRequestBytes,
  oneScope,
  pbSpan,
  SPAN_ID,
  TRACE_ID,
  traceRequestBytes,
} from './helpers.js';

function decodeError(run: () => unknown): OtlpDecodeError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(OtlpDecodeError);
    return err as OtlpDecodeError;
  }
  throw new Error('expected an OtlpDecodeError');
}

const jsonRequest = (spans: unknown) => json({ resourceSpans: [{ scopeSpans: [{ spans }] }] });

describe('an unreadable request body', () => {
  it('is bad input when a protobuf body is truncated', () => {
    const whole = traceRequestBytes(
      oneScope([pbSpan({ attributes: [{ key: 'k', value: { stringValue: 'x'.repeat(100) } }] })]),
    );
    const err = decodeError(() => decodeTraceRequest(whole.subarray(0, whole.length - 10), 'protobuf'));
    expect(err.kind).toBe('bad_input');
    expect(err).toBeInstanceOf(IngestError);
    expect(err.message).toMatch(/^request body is not a valid ExportTraceServiceRequest protobuf: index out of range/);
  });

  it('is bad input when protobuf carries an invalid wire type', () => {
    // 0x17: field 2 (unknown, so skipped by wire type), wire type 7 (does not exist).
    expect(decodeError(() => decodeTraceRequest(Buffer.from([0x17, 0x00]), 'protobuf')).message).toBe(
      'request body is not a valid ExportTraceServiceRequest protobuf: invalid wire type 7 at offset 1',
    );
  });

  it('says so when JSON arrives as protobuf, or a gzip body arrives without Content-Encoding', () => {
    const body = json({ resourceSpans: [] });
    expect(decodeError(() => decodeTraceRequest(body, 'protobuf')).message).toMatch(/looks like JSON/);
    // Gunzipping is the transport's job; decode refuses compressed bytes.
    expect(decodeError(() => decodeTraceRequest(gzipSync(body), 'json')).message).toMatch(/gzip-compressed/);
    expect(
      decodeError(() => decodeTraceRequest(gzipSync(traceRequestBytes(oneScope([pbSpan()]))), 'protobuf')).message,
    ).toMatch(/gzip-compressed/);
  });

  it('is bad input when the body is not JSON or not a JSON object', () => {
    expect(decodeError(() => decodeTraceRequest(Buffer.from('{"resourceSpans": ['), 'json')).message).toMatch(
      /^request body is not valid JSON/,
    );
    expect(decodeError(() => decodeTraceRequest(json([]), 'json')).message).toBe(
      'request body must be a JSON object (an ExportTraceServiceRequest), got a list',
    );
    expect(decodeError(() => decodeTraceRequest(json('spans'), 'json')).message).toMatch(/must be a JSON object/);
    expect(decodeError(() => decodeTraceRequest(json(null), 'json')).message).toMatch(/got null/);
  });

  it('is bad input when resourceSpans is not a list', () => {
    expect(decodeError(() => decodeTraceRequest(json({ resourceSpans: {} }), 'json')).message).toBe(
      'resourceSpans must be a list, got an object',
    );
  });

  it('is bad input when a list holds null where a message belongs', () => {
    expect(decodeError(() => decodeTraceRequest(jsonRequest([jsonSpan(), null]), 'json')).message).toBe(
      'resourceSpans[0].scopeSpans[0].spans[1] must be an object, got null',
    );
  });

  it('names the path when attributes are an object instead of a list of {key, value} entries', () => {
    const body = json({
      resourceSpans: [
        {
          scopeSpans: [
            { spans: [] },
            { spans: [jsonSpan(), jsonSpan(), jsonSpan(), jsonSpan({ attributes: { model: 'gpt-4o' } })] },
          ],
        },
      ],
    });
    expect(decodeError(() => decodeTraceRequest(body, 'json')).message).toBe(
      'resourceSpans[0].scopeSpans[1].spans[3].attributes must be a list of {key, value} entries, not an object',
    );
  });

  it.each([
    [
      'an AnyValue that is a bare string',
      [{ key: 'k', value: 'v' }],
      /attributes\[0\]\.value must be an AnyValue object/,
    ],
    ['a key that is not a string', [{ key: 1, value: { stringValue: 'v' } }], /attributes\[0\]\.key must be a string/],
    [
      'two members in one AnyValue',
      [{ key: 'k', value: { stringValue: 'v', intValue: 1 } }],
      /sets both stringValue and intValue/,
    ],
    ['an intValue with a fraction', [{ key: 'k', value: { intValue: 1.5 } }], /intValue must be a 64-bit integer/],
    [
      'an intValue beyond int64',
      [{ key: 'k', value: { intValue: '9223372036854775808' } }],
      /intValue must be a 64-bit integer/,
    ],
    [
      'bytes that are not base64',
      [{ key: 'k', value: { bytesValue: 'not base64!' } }],
      /bytesValue must be a base64 string/,
    ],
  ])('is bad input for %s', (_what, attributes, message) => {
    expect(decodeError(() => decodeTraceRequest(jsonRequest([jsonSpan({ attributes })]), 'json')).message).toMatch(
      message,
    );
  });

  it.each([
    ['a negative time', { startTimeUnixNano: '-1' }, /startTimeUnixNano must be an unsigned 64-bit integer/],
    ['a time in exponent form', { endTimeUnixNano: '1.5e18' }, /endTimeUnixNano must be an unsigned 64-bit integer/],
    ['an unknown kind name', { kind: 'CLIENT' }, /kind must be an enum number or one of SPAN_KIND_UNSPECIFIED/],
    ['a name that is not a string', { name: 42 }, /spans\[0\]\.name must be a string, got number 42/],
    ['events that are not a list', { events: 'none' }, /events must be a list/],
  ])('is bad input for a span with %s', (_what, fields, message) => {
    expect(decodeError(() => decodeTraceRequest(jsonRequest([jsonSpan(fields)]), 'json')).message).toMatch(message);
  });

  it('refuses AnyValue nesting deep enough to exhaust the stack', () => {
    let value: object = { stringValue: 'leaf' };
    for (let i = 0; i < 200; i++) value = { arrayValue: { values: [value] } };
    expect(
      decodeError(() => decodeTraceRequest(jsonRequest([jsonSpan({ attributes: [{ key: 'deep', value }] })]), 'json'))
        .message,
    ).toMatch(/nests deeper than 100 levels/);
  });

  it('refuses a logs body sent to the traces decoder and the reverse', () => {
    expect(decodeError(() => decodeTraceRequest(json({ resourceLogs: [] }), 'json')).message).toMatch(
      /has "resourceLogs" but no "resourceSpans"/,
    );
    expect(decodeError(() => decodeLogsRequest(json({ resourceSpans: [] }), 'json')).message).toMatch(
      /has "resourceSpans" but no "resourceLogs"/,
    );
  });
});

describe('spans with unusable ids', () => {
  const badSpans = [
    pbSpan({ name: 'good 0' }),
    pbSpan({ name: 'short trace', traceId: hex('5b8efff798038103d269b633813fc6') }),
    pbSpan({ name: 'zero trace', traceId: Buffer.alloc(16) }),
    pbSpan({ name: 'no span id', spanId: Buffer.alloc(0) }),
    pbSpan({ name: 'zero span', spanId: Buffer.alloc(8) }),
    pbSpan({ name: 'long parent', parentSpanId: hex('00112233445566778899') }),
    pbSpan({ name: 'bad link', links: [{ traceId: hex(TRACE_ID), spanId: hex('0011') }] }),
    pbSpan({ name: 'good 7' }),
  ];

  it('are rejected one by one with their position and the problem, while good spans decode', () => {
    const request = {
      resourceSpans: [
        { scopeSpans: [{ spans: badSpans.slice(0, 3) }, { spans: badSpans.slice(3, 5) }] },
        { scopeSpans: [{ spans: badSpans.slice(5) }] },
      ],
    };
    const { spans, rejected } = decodeTraceRequest(traceRequestBytes(request), 'protobuf');
    expect(spans.map((s) => s.name)).toEqual(['good 0', 'good 7']);
    expect(rejected).toEqual([
      { index: 1, reason: 'span "short trace": traceId is 15 bytes, expected 16' },
      { index: 2, reason: 'span "zero trace": traceId is all zeros' },
      { index: 3, reason: 'span "no span id": spanId is missing' },
      { index: 4, reason: 'span "zero span": spanId is all zeros' },
      { index: 5, reason: 'span "long parent": parentSpanId is 10 bytes, expected 8' },
      { index: 6, reason: 'span "bad link": links[0].spanId is 2 bytes, expected 8' },
    ]);
  });

  it('are rejected the same way from OTLP/JSON, naming the offending hex', () => {
    const spans = [
      jsonSpan({ name: 'good' }),
      jsonSpan({ name: 'not hex', traceId: 'zz8efff798038103d269b633813fc60c' }),
      jsonSpan({ name: 'no trace', traceId: undefined }),
      jsonSpan({ name: 'numeric', spanId: 12 }),
      jsonSpan({ name: 'short parent', parentSpanId: 'eee19b7e' }),
    ];
    const decoded = decodeTraceRequest(jsonRequest(spans), 'json');
    expect(decoded.spans.map((s) => s.name)).toEqual(['good']);
    expect(decoded.rejected).toEqual([
      { index: 1, reason: 'span "not hex": traceId "zz8efff798038103d269b633813fc60c" is not 32 hex characters' },
      { index: 2, reason: 'span "no trace": traceId is missing' },
      { index: 3, reason: 'span "numeric": spanId must be a hex string, got number' },
      { index: 4, reason: 'span "short parent": parentSpanId "eee19b7e" is not 16 hex characters' },
    ]);
  });
});

describe('log records with unusable ids', () => {
  it('are rejected by position while the rest decode', () => {
    const base = { timeUnixNano: '1', body: { stringValue: 'x' } };
    const request = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                { ...base, traceId: hex(TRACE_ID), spanId: hex(SPAN_ID) },
                { ...base, traceId: hex('0011') },
                { ...base, spanId: hex(TRACE_ID) },
                base,
              ],
            },
          ],
        },
      ],
    };
    const { logs, rejected } = decodeLogsRequest(logsRequestBytes(request), 'protobuf');
    expect(logs.map((l) => [l.traceId, l.spanId])).toEqual([
      [TRACE_ID, SPAN_ID],
      [null, null],
    ]);
    expect(rejected).toEqual([
      { index: 1, reason: 'log record: traceId is 2 bytes, expected 16' },
      { index: 2, reason: 'log record: spanId is 16 bytes, expected 8' },
    ]);
  });
});

describe('records with times past what the store holds', () => {
  // Times are fixed64 on the wire but stored as PostgreSQL bigint: 2^63 and above cannot be kept.
  const LAST = '9223372036854775807';
  const PAST = '9223372036854775808';
  const past = (field: string) =>
    `${field} ${PAST} is past the latest time tapedeck stores (${LAST} ns, in the year 2262)`;

  it('are rejected one by one from protobuf and OTLP/JSON, while the rest decode', () => {
    const pb = decodeTraceRequest(
      traceRequestBytes(
        oneScope([
          pbSpan({ name: 'last', startTimeUnixNano: LAST, endTimeUnixNano: LAST }),
          pbSpan({ name: 'late start', startTimeUnixNano: PAST }),
          pbSpan({ name: 'late end', endTimeUnixNano: '18446744073709551615' }),
        ]),
      ),
      'protobuf',
    );
    expect(pb.spans.map((s) => [s.name, s.startTimeUnixNano])).toEqual([['last', BigInt(LAST)]]);
    expect(pb.rejected).toEqual([
      { index: 1, reason: `span "late start": ${past('startTimeUnixNano')}` },
      {
        index: 2,
        reason:
          'span "late end": endTimeUnixNano 18446744073709551615 is past the latest time tapedeck stores (9223372036854775807 ns, in the year 2262)',
      },
    ]);
    const fromJson = decodeTraceRequest(
      jsonRequest([jsonSpan({ name: 'ok' }), jsonSpan({ name: 'late', endTimeUnixNano: PAST })]),
      'json',
    );
    expect(fromJson.spans.map((s) => s.name)).toEqual(['ok']);
    expect(fromJson.rejected).toEqual([{ index: 1, reason: `span "late": ${past('endTimeUnixNano')}` }]);
  });

  it('reject log records alone in both encodings', () => {
    const records = [
      { timeUnixNano: '1', body: { stringValue: 'kept' } },
      { timeUnixNano: PAST, body: { stringValue: 'late' } },
      { timeUnixNano: '1', observedTimeUnixNano: PAST, body: { stringValue: 'late seen' } },
    ];
    const request = { resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] };
    const expected = [
      { index: 1, reason: `log record: ${past('timeUnixNano')}` },
      { index: 2, reason: `log record: ${past('observedTimeUnixNano')}` },
    ];
    const pb = decodeLogsRequest(logsRequestBytes(request), 'protobuf');
    expect(pb.logs.map((l) => l.body)).toEqual(['kept']);
    expect(pb.rejected).toEqual(expected);
    const fromJson = decodeLogsRequest(json(request), 'json');
    expect(fromJson.logs.map((l) => l.body)).toEqual(['kept']);
    expect(fromJson.rejected).toEqual(expected);
  });
});
