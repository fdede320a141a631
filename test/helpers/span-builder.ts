/**
 * Test helper: SpanRecord / LogRecord / StepRow builders with quiet defaults, so a test
 * states only the fields it is about.
 */
import { createHash } from 'node:crypto';
import type { Attributes, LogRecord, SpanRecord } from '../../src/spans/span-record.js';
import type { StepRow } from '../../src/normalize/finish.js';

export const TRACE = '0af7651916cd43dd8448eb211c80319c';
const MS = 1_000_000n;
export const T0 = 1_796_000_000_000n * MS;

export function ms(n: number): bigint {
  return T0 + BigInt(n) * MS;
}

/**
 * A 16-hex span id from a name, so tests read "agent", "llm1" instead of hex: a name of up to
 * 8 characters spelled out, a longer one hashed (cut to 8, `run-a-10` and `run-a-11` would
 * be one span).
 */
export function sid(name: string): string {
  let hex = '';
  for (const ch of name) hex += ch.charCodeAt(0).toString(16).padStart(2, '0');
  if (hex.length > 16) return createHash('sha256').update(name).digest('hex').slice(0, 16);
  return hex.padEnd(16, '0');
}

export interface SpanInit {
  name?: string;
  id?: string;
  parent?: string | null;
  traceId?: string;
  start?: number;
  end?: number;
  kind?: SpanRecord['kind'];
  attributes?: Attributes;
  status?: SpanRecord['status']['code'];
  scope?: string;
  events?: { name: string; attributes: Attributes }[];
}

export function span(init: SpanInit): SpanRecord {
  const start = init.start ?? 0;
  return {
    traceId: init.traceId ?? TRACE,
    spanId: sid(init.id ?? init.name ?? 'span'),
    parentSpanId: init.parent ? sid(init.parent) : null,
    traceState: '',
    flags: 1,
    name: init.name ?? 'span',
    kind: init.kind ?? 'internal',
    startTimeUnixNano: ms(start),
    endTimeUnixNano: ms(init.end ?? start + 10),
    attributes: init.attributes ?? {},
    droppedAttributesCount: 0,
    events: (init.events ?? []).map((e) => ({
      timeUnixNano: ms(start),
      name: e.name,
      attributes: e.attributes,
      droppedAttributesCount: 0,
    })),
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: init.status ?? 'unset', message: '' },
    resource: { 'service.name': 'test-agent' },
    resourceDroppedAttributesCount: 0,
    scope: { name: init.scope ?? 'test', version: '1.0.0', attributes: {} },
    serviceName: 'test-agent',
  };
}

export function log(forSpan: string, eventName: string, body: LogRecord['body'], traceId = TRACE): LogRecord {
  return {
    traceId,
    spanId: sid(forSpan),
    timeUnixNano: T0,
    observedTimeUnixNano: T0,
    severityNumber: 9,
    severityText: '',
    eventName: null,
    body,
    attributes: { 'event.name': eventName, 'gen_ai.system': 'openai' },
    droppedAttributesCount: 0,
    flags: 1,
    resource: {},
    scope: { name: '@opentelemetry/instrumentation-openai', version: '0.21.0', attributes: {} },
    serviceName: null,
  };
}

export interface RowInit {
  id: string;
  parent?: string | null;
  kind?: StepRow['kind'];
  start?: number;
  end?: number;
  request?: StepRow['request'];
  response?: StepRow['response'];
  requestDigest?: string | null;
  tool?: string | null;
  toolCallId?: string | null;
  tokens?: Partial<StepRow['tokens']>;
  status?: StepRow['status'];
  model?: string | null;
}

/** A stored step row (what the store hands the assembler). */
export function row(init: RowInit): StepRow {
  const start = init.start ?? 0;
  return {
    kind: init.kind ?? 'llm',
    name: init.id,
    model: init.model ?? (init.kind === 'llm' || init.kind === undefined ? 'm' : null),
    tool: init.tool ?? null,
    service: 'test-agent',
    trace_id: TRACE,
    span_id: sid(init.id),
    parent_span_id: init.parent ? sid(init.parent) : null,
    start_ns: ms(start),
    duration_ns: ms(init.end ?? start + 10) - ms(start),
    status: init.status ?? 'unset',
    request: init.request ?? null,
    response: init.response ?? null,
    request_digest: init.requestDigest ?? (init.request ? `digest-${init.id}` : null),
    response_digest: null,
    fingerprint: `${init.kind ?? 'llm'}:x#`,
    tokens: { input: null, output: null, cache_read: null, cache_write: null, context: null, ...init.tokens },
    params: {},
    layout: 'otel-genai',
    cost_usd: null,
    ...(init.toolCallId !== undefined ? { tool_call_id: init.toolCallId } : {}),
  };
}
