/**
 * @module tapes/span-rows
 * SpanRecord / LogRecord ⇄ table rows of tapedeck_store.spans and tapedeck_store.logs.
 * Times inside events and links are kept as decimal strings so they stay exact in every
 * JSON reader; the top-level times are bigint columns.
 */
import { AttributeJson, toJsonText } from './attribute-json.js';
import type { Attributes, LogRecord, SpanRecord } from '../spans/span-record.js';
import type { Column } from '../store/bulk-insert.js';

/** attributes, events and links are AttributeJson in a row (binary COPY writes their JSON); a query parameter takes the text */
const jsonText = (value: unknown): string => String(value);

export const spanColumns: readonly Column[] = [
  { name: 'tenant' },
  { name: 'trace_id', cast: 'bytea' },
  { name: 'span_id', cast: 'bytea' },
  { name: 'parent_span_id', cast: 'bytea' },
  { name: 'trace_state' },
  { name: 'flags', cast: 'bigint' },
  { name: 'name' },
  { name: 'kind' },
  { name: 'start_ns', cast: 'bigint' },
  { name: 'end_ns', cast: 'bigint' },
  { name: 'status_code' },
  { name: 'status_message' },
  { name: 'attributes', cast: 'jsonb', param: jsonText },
  { name: 'events', cast: 'jsonb', param: jsonText },
  { name: 'links', cast: 'jsonb', param: jsonText },
  { name: 'resource', cast: 'jsonb' },
  { name: 'scope_name' },
  { name: 'scope_version' },
  { name: 'scope_attributes', cast: 'jsonb' },
  { name: 'service_name' },
  { name: 'dropped_attributes_count', cast: 'integer' },
  { name: 'dropped_events_count', cast: 'integer' },
  { name: 'dropped_links_count', cast: 'integer' },
  { name: 'resource_dropped_attributes_count', cast: 'integer' },
  { name: 'own_run' },
  { name: 'own_parent_run' },
];

/** spanColumns and the resolved run (src/tapes/run-resolution.ts), for writes that know it. */
export const spanWriteColumns: readonly Column[] = [...spanColumns, { name: 'run_id' }, { name: 'parent_run' }];

/**
 * The attribute an imported cassette's spans carry (cassettes/import.ts): their steps were
 * derived where the run was recorded and the spans hold nothing to derive them from again, so
 * reindex leaves them as they are.
 */
export const IMPORTED_FROM_CASSETTE = 'tapedeck.cassette.id';

export function hexToBytes(hex: string): Buffer {
  return Buffer.from(hex, 'hex');
}

// The decoders hand every span of a request the same frozen resource and scope objects
// (otlp/values.ts shared()): serialize each of them once, not once per span.
const sharedJson = new WeakMap<object, string>();

function sharedJsonText(value: Attributes): string {
  if (!Object.isFrozen(value)) return toJsonText(value);
  let text = sharedJson.get(value);
  if (text === undefined) {
    text = toJsonText(value);
    sharedJson.set(value, text);
  }
  return text;
}

export function spanToRow(tenant: string, s: SpanRecord, ownRun: string | null, parentRun: string | null): unknown[] {
  return [
    tenant,
    hexToBytes(s.traceId),
    hexToBytes(s.spanId),
    s.parentSpanId === null ? null : hexToBytes(s.parentSpanId),
    s.traceState,
    String(s.flags),
    s.name,
    s.kind,
    s.startTimeUnixNano.toString(),
    s.endTimeUnixNano.toString(),
    s.status.code,
    s.status.message,
    new AttributeJson(s.attributes),
    new AttributeJson(
      s.events.map((e) => ({
        time_unix_nano: e.timeUnixNano.toString(),
        name: e.name,
        attributes: e.attributes,
        dropped_attributes_count: e.droppedAttributesCount,
      })),
    ),
    new AttributeJson(
      s.links.map((l) => ({
        trace_id: l.traceId,
        span_id: l.spanId,
        trace_state: l.traceState,
        attributes: l.attributes,
        dropped_attributes_count: l.droppedAttributesCount,
        flags: l.flags,
      })),
    ),
    sharedJsonText(s.resource),
    s.scope.name,
    s.scope.version,
    sharedJsonText(s.scope.attributes),
    s.serviceName,
    s.droppedAttributesCount,
    s.droppedEventsCount,
    s.droppedLinksCount,
    s.resourceDroppedAttributesCount,
    ownRun,
    parentRun,
  ];
}

/** Columns to select for rowToSpanRecord. */
export const spanSelectList = `encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id,
  encode(parent_span_id, 'hex') AS parent_span_id, trace_state, flags, name, kind, start_ns, end_ns,
  status_code, status_message, attributes, events, links, resource, scope_name, scope_version,
  scope_attributes, service_name, dropped_attributes_count, dropped_events_count, dropped_links_count,
  resource_dropped_attributes_count`;

interface StoredEvent {
  time_unix_nano: string;
  name: string;
  attributes: Attributes;
  dropped_attributes_count: number;
}
interface StoredLink {
  trace_id: string;
  span_id: string;
  trace_state: string;
  attributes: Attributes;
  dropped_attributes_count: number;
  flags: number;
}

export function rowToSpanRecord(r: Record<string, unknown>): SpanRecord {
  return {
    traceId: r.trace_id as string,
    spanId: r.span_id as string,
    parentSpanId: (r.parent_span_id as string | null) ?? null,
    traceState: r.trace_state as string,
    flags: Number(r.flags),
    name: r.name as string,
    kind: r.kind as SpanRecord['kind'],
    startTimeUnixNano: BigInt(r.start_ns as bigint),
    endTimeUnixNano: BigInt(r.end_ns as bigint),
    attributes: r.attributes as Attributes,
    droppedAttributesCount: Number(r.dropped_attributes_count),
    events: (r.events as StoredEvent[]).map((e) => ({
      timeUnixNano: BigInt(e.time_unix_nano),
      name: e.name,
      attributes: e.attributes,
      droppedAttributesCount: e.dropped_attributes_count,
    })),
    droppedEventsCount: Number(r.dropped_events_count),
    links: (r.links as StoredLink[]).map((l) => ({
      traceId: l.trace_id,
      spanId: l.span_id,
      traceState: l.trace_state,
      attributes: l.attributes,
      droppedAttributesCount: l.dropped_attributes_count,
      flags: l.flags,
    })),
    droppedLinksCount: Number(r.dropped_links_count),
    status: { code: r.status_code as SpanRecord['status']['code'], message: r.status_message as string },
    resource: r.resource as Attributes,
    resourceDroppedAttributesCount: Number(r.resource_dropped_attributes_count),
    scope: {
      name: r.scope_name as string,
      version: r.scope_version as string,
      attributes: r.scope_attributes as Attributes,
    },
    serviceName: (r.service_name as string | null) ?? null,
  };
}

export const logColumns: readonly Column[] = [
  { name: 'tenant' },
  { name: 'record_key', cast: 'bytea' },
  { name: 'trace_id', cast: 'bytea' },
  { name: 'span_id', cast: 'bytea' },
  { name: 'time_ns', cast: 'bigint' },
  { name: 'observed_time_ns', cast: 'bigint' },
  { name: 'severity_number', cast: 'integer' },
  { name: 'severity_text' },
  { name: 'event_name' },
  { name: 'body', cast: 'jsonb' },
  { name: 'attributes', cast: 'jsonb' },
  { name: 'flags', cast: 'bigint' },
  { name: 'resource', cast: 'jsonb' },
  { name: 'scope_name' },
  { name: 'scope_version' },
  { name: 'service_name' },
  { name: 'dropped_attributes_count', cast: 'integer' },
  { name: 'position', cast: 'integer' },
  { name: 'received_at', cast: 'timestamptz' },
];

/** A log record's row: `position` in its request, `receivedAt` when the request arrived. */
export function logToRow(tenant: string, key: Buffer, l: LogRecord, position: number, receivedAt: string): unknown[] {
  return [
    tenant,
    key,
    l.traceId === null ? null : hexToBytes(l.traceId),
    l.spanId === null ? null : hexToBytes(l.spanId),
    l.timeUnixNano.toString(),
    l.observedTimeUnixNano.toString(),
    l.severityNumber,
    l.severityText,
    l.eventName,
    toJsonText(l.body),
    toJsonText(l.attributes),
    String(l.flags),
    toJsonText(l.resource),
    l.scope.name,
    l.scope.version,
    l.serviceName,
    l.droppedAttributesCount,
    position,
    receivedAt,
  ];
}

export const logSelectList = `encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id, time_ns,
  observed_time_ns, severity_number, severity_text, event_name, body, attributes, flags, resource,
  scope_name, scope_version, service_name, dropped_attributes_count`;

export function rowToLogRecord(r: Record<string, unknown>): LogRecord {
  return {
    traceId: (r.trace_id as string | null) ?? null,
    spanId: (r.span_id as string | null) ?? null,
    timeUnixNano: BigInt(r.time_ns as bigint),
    observedTimeUnixNano: BigInt(r.observed_time_ns as bigint),
    severityNumber: Number(r.severity_number),
    severityText: r.severity_text as string,
    eventName: (r.event_name as string | null) ?? null,
    body: (r.body as LogRecord['body']) ?? null,
    attributes: r.attributes as Attributes,
    droppedAttributesCount: Number(r.dropped_attributes_count),
    flags: Number(r.flags),
    resource: r.resource as Attributes,
    scope: { name: r.scope_name as string, version: r.scope_version as string, attributes: {} },
    serviceName: (r.service_name as string | null) ?? null,
  };
}
