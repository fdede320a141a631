/**
 * @module exporter/readable-span
 * An SDK ReadableSpan → the same protocol-free SpanRecord the OTLP decoders produce, so the
 * in-process exporter and the receivers store identical rows for identical spans.
 */
import type { Attributes as OtelAttributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { AttributeValue, Attributes, SpanKindName, SpanRecord, StatusCodeName } from '../spans/span-record.js';

// @opentelemetry/api SpanKind is 0-based (INTERNAL = 0); OTLP's is 1-based (INTERNAL = 1).
const kinds: SpanKindName[] = ['internal', 'server', 'client', 'producer', 'consumer'];
const statuses: StatusCodeName[] = ['unset', 'ok', 'error'];

export function hrTimeToNanos([seconds, nanos]: HrTime): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
}

export function attributesOf(attributes: OtelAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (!attributes) return out;
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    out[key] = value as AttributeValue;
  }
  return out;
}

export function readableSpanToRecord(span: ReadableSpan): SpanRecord {
  const context = span.spanContext();
  const parent = span.parentSpanContext?.spanId;
  const resource = attributesOf(span.resource.attributes as OtelAttributes);
  const serviceName = resource['service.name'];
  return {
    traceId: context.traceId.toLowerCase(),
    spanId: context.spanId.toLowerCase(),
    parentSpanId: parent && !/^0+$/.test(parent) ? parent.toLowerCase() : null,
    traceState: context.traceState?.serialize() ?? '',
    // OTLP span flags: W3C trace flags in the low byte, plus has-is-remote (0x100) and is-remote (0x200).
    flags: (context.traceFlags & 0xff) | 0x100 | (span.parentSpanContext?.isRemote ? 0x200 : 0),
    name: span.name,
    kind: kinds[span.kind] ?? 'unspecified',
    startTimeUnixNano: hrTimeToNanos(span.startTime),
    endTimeUnixNano: hrTimeToNanos(span.endTime),
    attributes: attributesOf(span.attributes),
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((e) => ({
      timeUnixNano: hrTimeToNanos(e.time),
      name: e.name,
      attributes: attributesOf(e.attributes),
      droppedAttributesCount: e.droppedAttributesCount ?? 0,
    })),
    droppedEventsCount: span.droppedEventsCount,
    links: span.links.map((l) => ({
      traceId: l.context.traceId.toLowerCase(),
      spanId: l.context.spanId.toLowerCase(),
      traceState: l.context.traceState?.serialize() ?? '',
      attributes: attributesOf(l.attributes),
      droppedAttributesCount: l.droppedAttributesCount ?? 0,
      flags: (l.context.traceFlags & 0xff) | 0x100 | (l.context.isRemote ? 0x200 : 0),
    })),
    droppedLinksCount: span.droppedLinksCount,
    status: { code: statuses[span.status.code] ?? 'unset', message: span.status.message ?? '' },
    resource,
    resourceDroppedAttributesCount: 0,
    scope: { name: span.instrumentationScope.name, version: span.instrumentationScope.version ?? '', attributes: {} },
    serviceName: typeof serviceName === 'string' ? serviceName : null,
  };
}
