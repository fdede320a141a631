/**
 * Real captures from real instrumentation libraries (test/fixtures/otlp) decode to what an
 * independent decoder read from the same bytes.
 */
import { describe, expect, it } from 'vitest';
import { decodeLogsRequest, decodeTraceRequest } from '../../../src/otlp/decode.js';
import type { AttributeValue, LogRecord, SpanRecord } from '../../../src/spans/span-record.js';
import { captureRequests, expectedRecords, scenarios } from './helpers.js';

/** The type names the corpus decoder wrote in attributeTypes. */
function typeName(v: AttributeValue): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'number';
  if (Array.isArray(v)) return `array<${v.length > 0 ? typeName(v[0]) : ''}>`;
  return v instanceof Uint8Array ? 'bytes' : v === null ? 'empty' : 'kvlist';
}

/** An integral double (1.0) has no int/double distinction in JS; compare by kind. */
function sameType(expected: string, value: AttributeValue): boolean {
  const actual = typeName(value);
  if (actual === 'number') return expected === 'int' ? Number.isInteger(value) : expected === 'double';
  if (expected === 'array<int>' || expected === 'array<double>') return actual === 'array<number>';
  return actual === expected;
}

function spanSummary(s: SpanRecord): Record<string, unknown> {
  return {
    serviceName: s.serviceName,
    scope: s.scope.name,
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    name: s.name,
    kind: s.kind,
    status: s.status.code,
    flags: s.flags,
    start: String(s.startTimeUnixNano),
    end: String(s.endTimeUnixNano),
    events: s.events.map((e) => e.name),
    links: s.links.length,
  };
}

function logSummary(l: LogRecord): Record<string, unknown> {
  return {
    serviceName: l.serviceName,
    traceId: l.traceId,
    spanId: l.spanId,
    eventName: l.eventName,
    severityNumber: l.severityNumber,
    time: String(l.timeUnixNano),
    bodyType: typeName(l.body),
  };
}

describe.each(scenarios())('capture %s', (scenario) => {
  const expected = expectedRecords(scenario);
  it.each(captureRequests(scenario).map((r) => [r.file, r] as const))(
    '%s decodes whole, matching the corpus decode',
    (_file, request) => {
      const want = expected[request.file];
      expect(want, `expected.json lists ${request.file}`).toBeDefined();
      const records =
        request.signal === 'traces'
          ? decodeTraceRequest(request.body, request.encoding)
          : decodeLogsRequest(request.body, request.encoding);
      expect(records.rejected).toEqual([]);
      const got: (SpanRecord | LogRecord)[] = 'spans' in records ? records.spans : records.logs;
      expect(got).toHaveLength(want.length);
      got.forEach((record, i) => {
        const { attributeTypes, ...rest } = want[i] as { attributeTypes: Record<string, string> };
        const summary = 'kind' in record ? spanSummary(record) : logSummary(record);
        expect(summary).toEqual(rest);
        expect(Object.keys(record.attributes).sort()).toEqual(Object.keys(attributeTypes).sort());
        for (const [key, type] of Object.entries(attributeTypes)) {
          expect(sameType(type, record.attributes[key]), `${request.file} record ${i} ${key}: ${type}`).toBe(true);
        }
      });
    },
  );
});

describe('the weather capture exported three ways', () => {
  it.each(scenarios().filter((s) => s.endsWith('/weather')))(
    'decodes to identical SpanRecords from %s over HTTP protobuf, HTTP JSON and gRPC',
    (scenario) => {
      const byEncoding = new Map<string, SpanRecord[]>();
      for (const r of captureRequests(scenario).filter((x) => x.signal === 'traces')) {
        const key = `${r.transport}/${r.encoding}`;
        byEncoding.set(key, [...(byEncoding.get(key) ?? []), ...decodeTraceRequest(r.body, r.encoding).spans]);
      }
      expect([...byEncoding.keys()].sort()).toEqual(['grpc/protobuf', 'http/json', 'http/protobuf']);
      // Exporters batch differently per transport; the same spans arrive in some order.
      const sorted = (spans: SpanRecord[]) => [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId));
      const reference = sorted(byEncoding.get('http/protobuf') ?? []);
      expect(reference.length).toBeGreaterThan(0);
      expect(sorted(byEncoding.get('http/json') ?? [])).toEqual(reference);
      expect(sorted(byEncoding.get('grpc/protobuf') ?? [])).toEqual(reference);
    },
  );
});

describe('otel-genai log records', () => {
  it('carry the event name from the event.name attribute and point at their model-call span', () => {
    const [traces] = captureRequests('otel-genai-openai/weather').filter((r) => r.signal === 'traces');
    const [logsRequest] = captureRequests('otel-genai-openai/weather').filter((r) => r.signal === 'logs');
    const spans = decodeTraceRequest(traces.body, traces.encoding).spans;
    const { logs, rejected } = decodeLogsRequest(logsRequest.body, 'protobuf');
    expect(rejected).toEqual([]);
    expect(logs.map((l) => l.eventName)).toContain('gen_ai.user.message');
    expect(logs.map((l) => l.eventName)).toContain('gen_ai.choice');
    const modelSpans = new Set(spans.filter((s) => s.name.startsWith('chat ')).map((s) => `${s.traceId}/${s.spanId}`));
    for (const log of logs) expect(modelSpans.has(`${log.traceId}/${log.spanId}`)).toBe(true);
    const user = logs.find((l) => l.eventName === 'gen_ai.user.message');
    expect(user?.body).toEqual({ content: "What's the weather in Paris right now?" });
    expect(user?.serviceName).toBe('weather-agent');
  });
});

describe('a 300 KiB prompt', () => {
  it('survives decode byte for byte', () => {
    const big = captureRequests('openllmetry-openai/big-prompt').find((r) => r.body.length > 300_000);
    expect(big).toBeDefined();
    const { spans } = decodeTraceRequest(big!.body, 'protobuf');
    const input = spans
      .map((s) => s.attributes['gen_ai.input.messages'])
      .find((v) => typeof v === 'string' && v.length > 300_000);
    expect(typeof input).toBe('string');
    expect(big!.body.includes(Buffer.from(input as string))).toBe(true);
  });
});
