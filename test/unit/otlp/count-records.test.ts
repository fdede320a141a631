/**
 * countOtlpRecords (src/otlp/count-records.ts) counts a request's spans or log records from
 * the wire format alone: the same count decoding finds, across resources and scopes, and no
 * more than is there when the bytes are cut short or are not protobuf.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countOtlpRecords } from '../../../src/otlp/count-records.js';
import { decodeLogsRequest, decodeTraceRequest } from '../../../src/otlp/decode.js';
import { otlpTypes } from '../../../src/otlp/proto.js';

const shape = fc.array(fc.array(fc.nat({ max: 6 }), { maxLength: 4 }), { maxLength: 4 });

function traces(counts: number[][]): Uint8Array {
  const { ExportTraceServiceRequest: R } = otlpTypes();
  let n = 0;
  const span = () => {
    n++;
    return {
      traceId: Buffer.alloc(16, 1),
      spanId: Buffer.from(n.toString(16).padStart(16, '0'), 'hex'),
      name: `s${n}`,
      attributes: [{ key: 'k', value: { stringValue: 'v'.repeat(n % 200) } }],
    };
  };
  return R.encode(
    R.fromObject({
      resourceSpans: counts.map((scopes) => ({
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'x' } }] },
        scopeSpans: scopes.map((k) => ({ scope: { name: 'scope' }, spans: Array.from({ length: k }, span) })),
      })),
    }),
  ).finish();
}

function logs(counts: number[][]): Uint8Array {
  const { ExportLogsServiceRequest: R } = otlpTypes();
  const record = { timeUnixNano: '1700000000000000001', body: { stringValue: 'event' }, severityNumber: 9 };
  return R.encode(
    R.fromObject({
      resourceLogs: counts.map((scopes) => ({
        scopeLogs: scopes.map((k) => ({ scope: { name: 'scope' }, logRecords: Array(k).fill(record) })),
      })),
    }),
  ).finish();
}

describe('countOtlpRecords', () => {
  it('counts what decoding finds, spans and log records alike', () => {
    fc.assert(
      fc.property(shape, (counts) => {
        const t = traces(counts);
        const l = logs(counts);
        const expected = counts.flat().reduce((a, b) => a + b, 0);
        expect(countOtlpRecords(t)).toBe(expected);
        expect(decodeTraceRequest(t, 'protobuf').spans).toHaveLength(expected);
        expect(countOtlpRecords(l)).toBe(expected);
        expect(decodeLogsRequest(l, 'protobuf').logs).toHaveLength(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('counts no more than is there in a cut-short body or bytes that are not protobuf', () => {
    fc.assert(
      fc.property(shape, fc.nat(), (counts, cut) => {
        const body = traces(counts);
        const total = counts.flat().reduce((a, b) => a + b, 0);
        expect(countOtlpRecords(body.subarray(0, cut % (body.length + 1)))).toBeLessThanOrEqual(total);
      }),
      { numRuns: 200 },
    );
    expect(countOtlpRecords(Buffer.from('{"resourceSpans":[]}'))).toBe(0);
    expect(countOtlpRecords(new Uint8Array(0))).toBe(0);
  });
});
