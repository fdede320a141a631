/**
 * @module otlp/decode-protobuf
 * Binary OTLP (HTTP application/x-protobuf and gRPC) to SpanRecord / LogRecord. protobufjs
 * decodes the bytes; we then walk its message objects once, straight into our records, with
 * no toObject/JSON round trip (the ingest path runs this for every span).
 */
import type protobuf from 'protobufjs';
import type {
  AttributeValue,
  Attributes,
  LogRecord,
  Rejection,
  SpanEvent,
  SpanLink,
  SpanRecord,
} from '../spans/span-record.js';
import { bodyHint, OtlpDecodeError } from './decode-error.js';
import {
  idFromBytes,
  linkIdProblem,
  optionalId,
  parentOrNull,
  spanIdProblem,
  SPAN_ID_BYTES,
  TRACE_ID_BYTES,
} from './ids.js';
import { otlpTypes } from './proto.js';
import type { LongBits } from './values.js';
import {
  eventNameOf,
  serviceNameOf,
  setAttribute,
  shared,
  signedToValue,
  spanKindName,
  statusCodeName,
  timeProblem,
  unsignedToBigInt,
} from './values.js';

// The shapes protobufjs produces for our .proto files (camelCase; absent message fields
// read as null, absent scalars as the proto3 default from the prototype).
interface PbAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: LongBits | number;
  doubleValue?: number;
  arrayValue?: { values: PbAnyValue[] };
  kvlistValue?: { values: PbKeyValue[] };
  bytesValue?: Uint8Array;
}
interface PbKeyValue {
  key: string;
  value: PbAnyValue | null;
}
interface PbResource {
  attributes: PbKeyValue[];
  droppedAttributesCount: number;
}
interface PbScope {
  name: string;
  version: string;
  attributes: PbKeyValue[];
}
interface PbEvent {
  timeUnixNano: LongBits | number;
  name: string;
  attributes: PbKeyValue[];
  droppedAttributesCount: number;
}
interface PbLink {
  traceId: Uint8Array;
  spanId: Uint8Array;
  traceState: string;
  attributes: PbKeyValue[];
  droppedAttributesCount: number;
  flags: number;
}
interface PbSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  traceState: string;
  parentSpanId: Uint8Array;
  flags: number;
  name: string;
  kind: number;
  startTimeUnixNano: LongBits | number;
  endTimeUnixNano: LongBits | number;
  attributes: PbKeyValue[];
  droppedAttributesCount: number;
  events: PbEvent[];
  droppedEventsCount: number;
  links: PbLink[];
  droppedLinksCount: number;
  status: { code: number; message: string } | null;
}
interface PbLogRecord {
  timeUnixNano: LongBits | number;
  observedTimeUnixNano: LongBits | number;
  severityNumber: number;
  severityText: string;
  body: PbAnyValue | null;
  attributes: PbKeyValue[];
  droppedAttributesCount: number;
  flags: number;
  traceId: Uint8Array;
  spanId: Uint8Array;
  eventName: string;
}
interface PbTraceRequest {
  resourceSpans: { resource: PbResource | null; scopeSpans: { scope: PbScope | null; spans: PbSpan[] }[] }[];
}
interface PbLogsRequest {
  resourceLogs: { resource: PbResource | null; scopeLogs: { scope: PbScope | null; logRecords: PbLogRecord[] }[] }[];
}

export function decodeTraceProtobuf(body: Uint8Array): { spans: SpanRecord[]; rejected: Rejection[] } {
  const request = decodeMessage(otlpTypes().ExportTraceServiceRequest, body) as unknown as PbTraceRequest;
  const spans: SpanRecord[] = [];
  const rejected: Rejection[] = [];
  let index = 0;
  for (const rs of request.resourceSpans) {
    const resource = shared(attributes(rs.resource?.attributes));
    const resourceDropped = rs.resource?.droppedAttributesCount ?? 0;
    const serviceName = serviceNameOf(resource);
    for (const ss of rs.scopeSpans) {
      const scope = scopeOf(ss.scope);
      for (const s of ss.spans) {
        const span = spanRecord(s, resource, resourceDropped, scope, serviceName);
        if (typeof span === 'string') rejected.push({ index, reason: `span "${s.name}": ${span}` });
        else spans.push(span);
        index++;
      }
    }
  }
  return { spans, rejected };
}

export function decodeLogsProtobuf(body: Uint8Array): { logs: LogRecord[]; rejected: Rejection[] } {
  const request = decodeMessage(otlpTypes().ExportLogsServiceRequest, body) as unknown as PbLogsRequest;
  const logs: LogRecord[] = [];
  const rejected: Rejection[] = [];
  let index = 0;
  for (const rl of request.resourceLogs) {
    const resource = shared(attributes(rl.resource?.attributes));
    const serviceName = serviceNameOf(resource);
    for (const sl of rl.scopeLogs) {
      const scope = scopeOf(sl.scope);
      for (const r of sl.logRecords) {
        const traceId = optionalId(idFromBytes(r.traceId, TRACE_ID_BYTES, 'traceId'));
        const spanId = optionalId(idFromBytes(r.spanId, SPAN_ID_BYTES, 'spanId'));
        const timeUnixNano = unsignedToBigInt(r.timeUnixNano);
        const observedTimeUnixNano = unsignedToBigInt(r.observedTimeUnixNano);
        const badTime =
          timeProblem('timeUnixNano', timeUnixNano) ?? timeProblem('observedTimeUnixNano', observedTimeUnixNano);
        if (traceId !== null && typeof traceId === 'object')
          rejected.push({ index, reason: `log record: ${traceId.problem}` });
        else if (spanId !== null && typeof spanId === 'object')
          rejected.push({ index, reason: `log record: ${spanId.problem}` });
        else if (badTime !== undefined) rejected.push({ index, reason: `log record: ${badTime}` });
        else {
          const attrs = attributes(r.attributes);
          logs.push({
            traceId,
            spanId,
            timeUnixNano,
            observedTimeUnixNano,
            severityNumber: r.severityNumber,
            severityText: r.severityText,
            eventName: eventNameOf(r.eventName, attrs),
            body: r.body ? anyValue(r.body) : null,
            attributes: attrs,
            droppedAttributesCount: r.droppedAttributesCount,
            flags: r.flags,
            resource,
            scope,
            serviceName,
          });
        }
        index++;
      }
    }
  }
  return { logs, rejected };
}

function decodeMessage(type: protobuf.Type, body: Uint8Array): protobuf.Message {
  // protobufjs reads strings natively (utf8Slice) and slices bytes without copying only
  // when it is handed a Buffer; wrap a plain Uint8Array view without copying it.
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  try {
    return type.decode(buf);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new OtlpDecodeError(
      `request body is not a valid ${type.name} protobuf: ${detail}${bodyHint(buf, 'protobuf')}`,
      { cause: err },
    );
  }
}

/** A span, or why its ids make it unusable. */
function spanRecord(
  s: PbSpan,
  resource: Attributes,
  resourceDropped: number,
  scope: SpanRecord['scope'],
  serviceName: string | null,
): SpanRecord | string {
  const traceId = idFromBytes(s.traceId, TRACE_ID_BYTES, 'traceId');
  const spanId = idFromBytes(s.spanId, SPAN_ID_BYTES, 'spanId');
  const parent = idFromBytes(s.parentSpanId, SPAN_ID_BYTES, 'parentSpanId');
  const startTimeUnixNano = unsignedToBigInt(s.startTimeUnixNano);
  const endTimeUnixNano = unsignedToBigInt(s.endTimeUnixNano);
  const problem =
    spanIdProblem(traceId, spanId, parent) ??
    timeProblem('startTimeUnixNano', startTimeUnixNano) ??
    timeProblem('endTimeUnixNano', endTimeUnixNano);
  if (problem !== undefined) return problem;
  const links: SpanLink[] = [];
  for (let i = 0; i < s.links.length; i++) {
    const l = s.links[i];
    const linkTrace = idFromBytes(l.traceId, TRACE_ID_BYTES, 'traceId');
    const linkSpan = idFromBytes(l.spanId, SPAN_ID_BYTES, 'spanId');
    const linkProblem = linkIdProblem(linkTrace, linkSpan, `links[${i}]`);
    if (linkProblem !== undefined) return linkProblem;
    links.push({
      traceId: linkTrace as string,
      spanId: linkSpan as string,
      traceState: l.traceState,
      attributes: attributes(l.attributes),
      droppedAttributesCount: l.droppedAttributesCount,
      flags: l.flags,
    });
  }
  const events: SpanEvent[] = new Array(s.events.length);
  for (let i = 0; i < s.events.length; i++) {
    const e = s.events[i];
    events[i] = {
      timeUnixNano: unsignedToBigInt(e.timeUnixNano),
      name: e.name,
      attributes: attributes(e.attributes),
      droppedAttributesCount: e.droppedAttributesCount,
    };
  }
  return {
    traceId: traceId as string,
    spanId: spanId as string,
    parentSpanId: parentOrNull(parent as string),
    traceState: s.traceState,
    flags: s.flags,
    name: s.name,
    kind: spanKindName(s.kind),
    startTimeUnixNano,
    endTimeUnixNano,
    attributes: attributes(s.attributes),
    droppedAttributesCount: s.droppedAttributesCount,
    events,
    droppedEventsCount: s.droppedEventsCount,
    links,
    droppedLinksCount: s.droppedLinksCount,
    status: s.status
      ? { code: statusCodeName(s.status.code), message: s.status.message }
      : { code: 'unset', message: '' },
    resource,
    resourceDroppedAttributesCount: resourceDropped,
    scope,
    serviceName,
  };
}

function scopeOf(scope: PbScope | null): SpanRecord['scope'] {
  return shared({
    name: scope?.name ?? '',
    version: scope?.version ?? '',
    attributes: shared(attributes(scope?.attributes)),
  });
}

function attributes(kvs: PbKeyValue[] | undefined): Attributes {
  const out: Attributes = {};
  if (kvs === undefined) return out;
  for (let i = 0; i < kvs.length; i++) {
    const kv = kvs[i];
    setAttribute(out, kv.key, kv.value ? anyValue(kv.value) : null);
  }
  return out;
}

/**
 * Unwrap an AnyValue. protobufjs sets only the oneof member that was on the wire as an own
 * property (the others read defaults through the prototype), so the own key names the
 * member; the last one wins, as in protobuf. No member, or the profiles-only
 * string_value_strindex, is an empty value: null.
 */
function anyValue(v: PbAnyValue): AttributeValue {
  const keys = Object.keys(v);
  switch (keys[keys.length - 1]) {
    case 'stringValue':
      return v.stringValue as string;
    case 'intValue':
      return signedToValue(v.intValue as LongBits | number);
    case 'boolValue':
      return v.boolValue as boolean;
    case 'doubleValue':
      return v.doubleValue as number;
    case 'arrayValue': {
      const values = v.arrayValue?.values ?? [];
      const out: AttributeValue[] = new Array(values.length);
      for (let i = 0; i < values.length; i++) out[i] = anyValue(values[i]);
      return out;
    }
    case 'kvlistValue':
      return attributes(v.kvlistValue?.values);
    // Copy: the decoded bytes are a view into the request body, which must not be pinned
    // in memory (or changed under us) for as long as the record lives.
    case 'bytesValue':
      return new Uint8Array(v.bytesValue as Uint8Array);
    default:
      return null;
  }
}
