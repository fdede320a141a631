/**
 * @module spans/span-record
 * The protocol-free shapes every front door produces and everything downstream consumes.
 * Nothing past decode knows OTLP: ids are lower-case hex, times are nanosecond bigints,
 * attribute values are plain JS values (AnyValue unwrapped).
 */

/** An unwrapped OTLP AnyValue. int64 arrives as a number when it is a safe integer,
 * otherwise as a bigint; bytes arrive as a Uint8Array. */
export type AttributeValue =
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | null
  | AttributeValue[]
  | { [key: string]: AttributeValue };

export type Attributes = Record<string, AttributeValue>;

export type SpanKindName = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
export type StatusCodeName = 'unset' | 'ok' | 'error';

export interface SpanEvent {
  timeUnixNano: bigint;
  name: string;
  attributes: Attributes;
  droppedAttributesCount: number;
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: Attributes;
  droppedAttributesCount: number;
  flags: number;
}

export interface SpanRecord {
  traceId: string; // 32 lower-case hex
  spanId: string; // 16 lower-case hex
  parentSpanId: string | null; // null for a root span
  traceState: string;
  flags: number;
  name: string;
  kind: SpanKindName;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Attributes;
  droppedAttributesCount: number;
  events: SpanEvent[];
  droppedEventsCount: number;
  links: SpanLink[];
  droppedLinksCount: number;
  status: { code: StatusCodeName; message: string };
  resource: Attributes;
  resourceDroppedAttributesCount: number;
  scope: { name: string; version: string; attributes: Attributes };
  /** resource attribute service.name, lifted because every read groups by it */
  serviceName: string | null;
}

/** A log record, kept because GenAI instrumentations send message content as log events
 * correlated to their span by trace id and span id. */
export interface LogRecord {
  traceId: string | null;
  spanId: string | null;
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  severityNumber: number;
  severityText: string;
  /** `event_name` field, or the older `event.name` attribute */
  eventName: string | null;
  body: AttributeValue;
  attributes: Attributes;
  droppedAttributesCount: number;
  flags: number;
  resource: Attributes;
  scope: { name: string; version: string; attributes: Attributes };
  serviceName: string | null;
}

/** A span the decoder could not accept, reported back in partial_success. */
export interface Rejection {
  index: number;
  reason: string;
}
