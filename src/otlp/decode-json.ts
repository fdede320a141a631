/**
 * @module otlp/decode-json
 * OTLP/JSON (HTTP application/json) to SpanRecord / LogRecord. protobufjs fromObject would
 * read ids as base64 and 64-bit integers loosely, so we walk the parsed JSON ourselves with
 * the OTLP rules (hex ids, int64 as string or number, integer enums) and produce exactly
 * the records the protobuf path produces for the same request.
 */
import type {
  AttributeValue,
  Attributes,
  LogRecord,
  Rejection,
  SpanEvent,
  SpanLink,
  SpanRecord,
} from '../spans/span-record.js';
import { bodyHint } from './decode-error.js';
import {
  idFromJson,
  linkIdProblem,
  optionalId,
  parentOrNull,
  spanIdProblem,
  SPAN_ID_BYTES,
  TRACE_ID_BYTES,
} from './ids.js';
import type { JsonObject } from './json-fields.js';
import {
  bad,
  bool,
  bytes,
  describe,
  double,
  element,
  enumValue,
  field,
  int64,
  isObject,
  list,
  message,
  string,
  uint32,
  uint64,
} from './json-fields.js';
import { otlpTypes } from './proto.js';
import {
  eventNameOf,
  serviceNameOf,
  setAttribute,
  shared,
  SPAN_KIND_NUMBERS,
  spanKindName,
  STATUS_CODE_NUMBERS,
  statusCodeName,
  timeProblem,
} from './values.js';

/** Deeper AnyValue nesting than protobufjs allows on the binary path is refused here too,
 * so a hostile body cannot exhaust the stack. */
const MAX_DEPTH = 100;

export function decodeTraceJson(body: Uint8Array): { spans: SpanRecord[]; rejected: Rejection[] } {
  const request = parseRequest(body, 'ExportTraceServiceRequest', 'resourceSpans', 'resourceLogs');
  const spans: SpanRecord[] = [];
  const rejected: Rejection[] = [];
  let index = 0;
  const resourceSpans = list(field(request, 'resourceSpans', 'resource_spans'), 'resourceSpans');
  for (let r = 0; r < resourceSpans.length; r++) {
    const rPath = `resourceSpans[${r}]`;
    const rs = element(resourceSpans[r], rPath);
    const res = resourceOf(rs, rPath);
    const scopeSpans = list(field(rs, 'scopeSpans', 'scope_spans'), `${rPath}.scopeSpans`);
    for (let s = 0; s < scopeSpans.length; s++) {
      const sPath = `${rPath}.scopeSpans[${s}]`;
      const ss = element(scopeSpans[s], sPath);
      const scope = scopeOf(ss, sPath);
      const items = list(field(ss, 'spans'), `${sPath}.spans`);
      for (let i = 0; i < items.length; i++) {
        const path = `${sPath}.spans[${i}]`;
        const span = spanRecord(element(items[i], path), path, res, scope);
        if (typeof span === 'object') spans.push(span);
        else rejected.push({ index, reason: span });
        index++;
      }
    }
  }
  return { spans, rejected };
}

export function decodeLogsJson(body: Uint8Array): { logs: LogRecord[]; rejected: Rejection[] } {
  const request = parseRequest(body, 'ExportLogsServiceRequest', 'resourceLogs', 'resourceSpans');
  const severities = otlpTypes().SeverityNumber.values;
  const logs: LogRecord[] = [];
  const rejected: Rejection[] = [];
  let index = 0;
  const resourceLogs = list(field(request, 'resourceLogs', 'resource_logs'), 'resourceLogs');
  for (let r = 0; r < resourceLogs.length; r++) {
    const rPath = `resourceLogs[${r}]`;
    const rl = element(resourceLogs[r], rPath);
    const res = resourceOf(rl, rPath);
    const scopeLogs = list(field(rl, 'scopeLogs', 'scope_logs'), `${rPath}.scopeLogs`);
    for (let s = 0; s < scopeLogs.length; s++) {
      const sPath = `${rPath}.scopeLogs[${s}]`;
      const sl = element(scopeLogs[s], sPath);
      const scope = scopeOf(sl, sPath);
      const items = list(field(sl, 'logRecords', 'log_records'), `${sPath}.logRecords`);
      for (let i = 0; i < items.length; i++) {
        const path = `${sPath}.logRecords[${i}]`;
        const o = element(items[i], path);
        const traceId = optionalId(idFromJson(field(o, 'traceId', 'trace_id'), TRACE_ID_BYTES, 'traceId'));
        const spanId = optionalId(idFromJson(field(o, 'spanId', 'span_id'), SPAN_ID_BYTES, 'spanId'));
        const attrs = attributes(field(o, 'attributes'), `${path}.attributes`, 0);
        const bodyValue = anyValue(field(o, 'body'), `${path}.body`, 0);
        const record: LogRecord = {
          traceId: typeof traceId === 'object' ? null : traceId,
          spanId: typeof spanId === 'object' ? null : spanId,
          timeUnixNano: uint64(field(o, 'timeUnixNano', 'time_unix_nano'), `${path}.timeUnixNano`),
          observedTimeUnixNano: uint64(
            field(o, 'observedTimeUnixNano', 'observed_time_unix_nano'),
            `${path}.observedTimeUnixNano`,
          ),
          severityNumber: enumValue(
            field(o, 'severityNumber', 'severity_number'),
            severities,
            `${path}.severityNumber`,
          ),
          severityText: string(field(o, 'severityText', 'severity_text'), `${path}.severityText`),
          eventName: eventNameOf(string(field(o, 'eventName', 'event_name'), `${path}.eventName`), attrs),
          body: bodyValue,
          attributes: attrs,
          droppedAttributesCount: uint32(
            field(o, 'droppedAttributesCount', 'dropped_attributes_count'),
            `${path}.droppedAttributesCount`,
          ),
          flags: uint32(field(o, 'flags'), `${path}.flags`),
          resource: res.attributes,
          scope,
          serviceName: res.serviceName,
        };
        // Ids are checked after the whole record parsed: a structurally broken record
        // fails the request even when its ids are also wrong.
        if (traceId !== null && typeof traceId === 'object')
          rejected.push({ index, reason: `log record: ${traceId.problem}` });
        else if (spanId !== null && typeof spanId === 'object')
          rejected.push({ index, reason: `log record: ${spanId.problem}` });
        else {
          const badTime =
            timeProblem('timeUnixNano', record.timeUnixNano) ??
            timeProblem('observedTimeUnixNano', record.observedTimeUnixNano);
          if (badTime !== undefined) rejected.push({ index, reason: `log record: ${badTime}` });
          else logs.push(record);
        }
        index++;
      }
    }
  }
  return { logs, rejected };
}

function parseRequest(body: Uint8Array, messageName: string, key: string, otherSignalKey: string): JsonObject {
  let text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a UTF-8 byte order mark
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw bad(
      `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}${bodyHint(body, 'json')}`,
    );
  }
  if (!isObject(parsed)) throw bad(`request body must be a JSON object (an ${messageName}), got ${describe(parsed)}`);
  // The other signal's body decodes as an empty request; refuse it so a misrouted
  // exporter hears about it instead of getting a silent success.
  if (parsed[key] === undefined && parsed[otherSignalKey] !== undefined) {
    throw bad(
      `request body has "${otherSignalKey}" but no "${key}": is an exporter for the other signal pointed at this endpoint?`,
    );
  }
  return parsed;
}

interface ResourceInfo {
  attributes: Attributes;
  dropped: number;
  serviceName: string | null;
}

function resourceOf(parent: JsonObject, parentPath: string): ResourceInfo {
  const path = `${parentPath}.resource`;
  const o = message(field(parent, 'resource'), path) ?? {};
  const attrs = shared(attributes(field(o, 'attributes'), `${path}.attributes`, 0));
  const dropped = uint32(
    field(o, 'droppedAttributesCount', 'dropped_attributes_count'),
    `${path}.droppedAttributesCount`,
  );
  return { attributes: attrs, dropped, serviceName: serviceNameOf(attrs) };
}

function scopeOf(parent: JsonObject, parentPath: string): SpanRecord['scope'] {
  const path = `${parentPath}.scope`;
  const o = message(field(parent, 'scope'), path) ?? {};
  return shared({
    name: string(field(o, 'name'), `${path}.name`),
    version: string(field(o, 'version'), `${path}.version`),
    attributes: shared(attributes(field(o, 'attributes'), `${path}.attributes`, 0)),
  });
}

/** A span, or the reason (naming the span) why its ids make it unusable. */
function spanRecord(o: JsonObject, path: string, res: ResourceInfo, scope: SpanRecord['scope']): SpanRecord | string {
  const name = string(field(o, 'name'), `${path}.name`);
  const traceId = idFromJson(field(o, 'traceId', 'trace_id'), TRACE_ID_BYTES, 'traceId');
  const spanId = idFromJson(field(o, 'spanId', 'span_id'), SPAN_ID_BYTES, 'spanId');
  const parent = idFromJson(field(o, 'parentSpanId', 'parent_span_id'), SPAN_ID_BYTES, 'parentSpanId');
  let problem = spanIdProblem(traceId, spanId, parent);
  const events: SpanEvent[] = list(field(o, 'events'), `${path}.events`).map((e, i) => {
    const ePath = `${path}.events[${i}]`;
    const eo = element(e, ePath);
    return {
      timeUnixNano: uint64(field(eo, 'timeUnixNano', 'time_unix_nano'), `${ePath}.timeUnixNano`),
      name: string(field(eo, 'name'), `${ePath}.name`),
      attributes: attributes(field(eo, 'attributes'), `${ePath}.attributes`, 0),
      droppedAttributesCount: uint32(
        field(eo, 'droppedAttributesCount', 'dropped_attributes_count'),
        `${ePath}.droppedAttributesCount`,
      ),
    };
  });
  const links: SpanLink[] = list(field(o, 'links'), `${path}.links`).map((l, i) => {
    const lPath = `${path}.links[${i}]`;
    const lo = element(l, lPath);
    const linkTrace = idFromJson(field(lo, 'traceId', 'trace_id'), TRACE_ID_BYTES, 'traceId');
    const linkSpan = idFromJson(field(lo, 'spanId', 'span_id'), SPAN_ID_BYTES, 'spanId');
    problem ??= linkIdProblem(linkTrace, linkSpan, `links[${i}]`);
    return {
      traceId: typeof linkTrace === 'string' ? linkTrace : '',
      spanId: typeof linkSpan === 'string' ? linkSpan : '',
      traceState: string(field(lo, 'traceState', 'trace_state'), `${lPath}.traceState`),
      attributes: attributes(field(lo, 'attributes'), `${lPath}.attributes`, 0),
      droppedAttributesCount: uint32(
        field(lo, 'droppedAttributesCount', 'dropped_attributes_count'),
        `${lPath}.droppedAttributesCount`,
      ),
      flags: uint32(field(lo, 'flags'), `${lPath}.flags`),
    };
  });
  const status = message(field(o, 'status'), `${path}.status`) ?? {};
  const record: SpanRecord = {
    traceId: traceId as string,
    spanId: spanId as string,
    parentSpanId: typeof parent === 'string' ? parentOrNull(parent) : null,
    traceState: string(field(o, 'traceState', 'trace_state'), `${path}.traceState`),
    flags: uint32(field(o, 'flags'), `${path}.flags`),
    name,
    kind: spanKindName(enumValue(field(o, 'kind'), SPAN_KIND_NUMBERS, `${path}.kind`)),
    startTimeUnixNano: uint64(field(o, 'startTimeUnixNano', 'start_time_unix_nano'), `${path}.startTimeUnixNano`),
    endTimeUnixNano: uint64(field(o, 'endTimeUnixNano', 'end_time_unix_nano'), `${path}.endTimeUnixNano`),
    attributes: attributes(field(o, 'attributes'), `${path}.attributes`, 0),
    droppedAttributesCount: uint32(
      field(o, 'droppedAttributesCount', 'dropped_attributes_count'),
      `${path}.droppedAttributesCount`,
    ),
    events,
    droppedEventsCount: uint32(field(o, 'droppedEventsCount', 'dropped_events_count'), `${path}.droppedEventsCount`),
    links,
    droppedLinksCount: uint32(field(o, 'droppedLinksCount', 'dropped_links_count'), `${path}.droppedLinksCount`),
    status: {
      code: statusCodeName(enumValue(field(status, 'code'), STATUS_CODE_NUMBERS, `${path}.status.code`)),
      message: string(field(status, 'message'), `${path}.status.message`),
    },
    resource: res.attributes,
    resourceDroppedAttributesCount: res.dropped,
    scope,
    serviceName: res.serviceName,
  };
  // Ids and times are judged after the whole span parsed, as on the log path: structure first.
  problem ??=
    timeProblem('startTimeUnixNano', record.startTimeUnixNano) ??
    timeProblem('endTimeUnixNano', record.endTimeUnixNano);
  return problem === undefined ? record : `span "${name}": ${problem}`;
}

function attributes(v: unknown, path: string, depth: number): Attributes {
  const out: Attributes = {};
  if (v === undefined || v === null) return out;
  if (!Array.isArray(v)) {
    throw bad(
      `${path} must be a list of {key, value} entries${isObject(v) ? ', not an object' : `, got ${describe(v)}`}`,
    );
  }
  for (let i = 0; i < v.length; i++) {
    const kv: unknown = v[i];
    if (!isObject(kv)) throw bad(`${path}[${i}] must be a {key, value} entry, got ${describe(kv)}`);
    const key = kv.key;
    if (typeof key !== 'string') throw bad(`${path}[${i}].key must be a string, got ${describe(key)}`);
    const value = kv.value;
    setAttribute(
      out,
      key,
      value === undefined || value === null ? null : anyValue(value, `${path}[${i}].value`, depth),
    );
  }
  return out;
}

/** Unwrap an AnyValue: exactly one member may be set; none (`{}`) is an empty value. */
function anyValue(v: unknown, path: string, depth: number): AttributeValue {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) throw bad(`${path} must be an AnyValue object such as {"stringValue": "..."}, got ${describe(v)}`);
  if (depth >= MAX_DEPTH) throw bad(`${path} nests deeper than ${MAX_DEPTH} levels`);
  let result: AttributeValue = null;
  let member: string | undefined;
  for (const key of Object.keys(v)) {
    const raw = v[key];
    if (raw === null || raw === undefined) continue;
    let value: AttributeValue;
    switch (key) {
      case 'stringValue':
      case 'string_value':
        value = string(raw, `${path}.stringValue`);
        break;
      case 'boolValue':
      case 'bool_value':
        value = bool(raw, `${path}.boolValue`);
        break;
      case 'intValue':
      case 'int_value':
        value = int64(raw, `${path}.intValue`);
        break;
      case 'doubleValue':
      case 'double_value':
        value = double(raw, `${path}.doubleValue`);
        break;
      case 'bytesValue':
      case 'bytes_value':
        value = bytes(raw, `${path}.bytesValue`);
        break;
      case 'arrayValue':
      case 'array_value': {
        const values = list(field(message(raw, `${path}.arrayValue`) ?? {}, 'values'), `${path}.arrayValue.values`);
        value = values.map((item, i) => anyValue(item, `${path}.arrayValue.values[${i}]`, depth + 1));
        break;
      }
      case 'kvlistValue':
      case 'kvlist_value':
        value = attributes(
          field(message(raw, `${path}.kvlistValue`) ?? {}, 'values'),
          `${path}.kvlistValue.values`,
          depth + 1,
        );
        break;
      default:
        continue; // unknown fields (and profiles-only stringValueStrindex) are ignored
    }
    if (member !== undefined) throw bad(`${path} sets both ${member} and ${key}; an AnyValue holds one value`);
    member = key;
    result = value;
  }
  return result;
}
