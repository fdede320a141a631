/**
 * @module spans/storable-text
 * PostgreSQL's text and jsonb refuse NUL (U+0000), and jsonb refuses a lone UTF-16 surrogate
 * (JSON allows both as escapes; protobuf strings carry NUL). One such character would fail
 * its whole batch, so every string of a span or log record (names, attribute keys and values,
 * event and link fields, resource and scope, log bodies) has each of them replaced by U+FFFD
 * before anything else reads it: what is stored, derived and read back is the same text.
 *
 * Records with nothing to replace (nearly all) come back as the same objects, unallocated.
 */
import type { AttributeValue, Attributes, LogRecord, SpanRecord } from './span-record.js';

export const REPLACEMENT_CHARACTER = '\ufffd';

/** NUL, a high surrogate not followed by a low one, a low surrogate not preceded by a high one. */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

// String.prototype.isWellFormed (ES2024, in Node 20) is a native scan; the lib here is ES2022.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

export function isStorable(s: string): boolean {
  return s.indexOf('\0') === -1 && isWellFormed(s);
}

/** s with NUL and lone surrogates replaced by U+FFFD (s itself when it has none). */
export function storableString(s: string): string {
  return isStorable(s) ? s : s.replace(UNSTORABLE, REPLACEMENT_CHARACTER);
}

/** Replaces in spans; returns the same array when nothing had to change. */
export function storableSpans(spans: readonly SpanRecord[]): readonly SpanRecord[] {
  const shared = new Map<Attributes, Attributes>();
  return replaceChanged(spans, (s) => storableSpan(s, shared));
}

/** Replaces in log records; returns the same array when nothing had to change. */
export function storableLogs(logs: readonly LogRecord[]): readonly LogRecord[] {
  const shared = new Map<Attributes, Attributes>();
  return replaceChanged(logs, (l) => storableLog(l, shared));
}

/** items with each replaced by storable(item), copied only once one of them changes. */
function replaceChanged<T>(items: readonly T[], storable: (item: T) => T): readonly T[] {
  let out: T[] | null = null;
  for (let i = 0; i < items.length; i++) {
    const item = storable(items[i]);
    if (item !== items[i]) {
      out ??= items.slice();
      out[i] = item;
    }
  }
  return out ?? items;
}

function storableSpan(s: SpanRecord, shared: Map<Attributes, Attributes>): SpanRecord {
  const name = storableString(s.name);
  const traceState = storableString(s.traceState);
  const statusMessage = storableString(s.status.message);
  const attributes = storableAttributes(s.attributes);
  const events = mapSame(s.events, (e) => {
    const eName = storableString(e.name);
    const eAttributes = storableAttributes(e.attributes);
    return eName === e.name && eAttributes === e.attributes ? e : { ...e, name: eName, attributes: eAttributes };
  });
  const links = mapSame(s.links, (l) => {
    const lState = storableString(l.traceState);
    const lAttributes = storableAttributes(l.attributes);
    return lState === l.traceState && lAttributes === l.attributes
      ? l
      : { ...l, traceState: lState, attributes: lAttributes };
  });
  const resource = sharedAttributes(s.resource, shared);
  const scope = storableScope(s.scope, shared);
  const serviceName = s.serviceName === null ? null : storableString(s.serviceName);
  if (
    name === s.name &&
    traceState === s.traceState &&
    statusMessage === s.status.message &&
    attributes === s.attributes &&
    events === s.events &&
    links === s.links &&
    resource === s.resource &&
    scope === s.scope &&
    serviceName === s.serviceName
  )
    return s;
  return {
    ...s,
    name,
    traceState,
    status: statusMessage === s.status.message ? s.status : { ...s.status, message: statusMessage },
    attributes,
    events,
    links,
    resource,
    scope,
    serviceName,
  };
}

function storableLog(l: LogRecord, shared: Map<Attributes, Attributes>): LogRecord {
  const severityText = storableString(l.severityText);
  const eventName = l.eventName === null ? null : storableString(l.eventName);
  const body = storableValue(l.body);
  const attributes = storableAttributes(l.attributes);
  const resource = sharedAttributes(l.resource, shared);
  const scope = storableScope(l.scope, shared);
  const serviceName = l.serviceName === null ? null : storableString(l.serviceName);
  if (
    severityText === l.severityText &&
    eventName === l.eventName &&
    body === l.body &&
    attributes === l.attributes &&
    resource === l.resource &&
    scope === l.scope &&
    serviceName === l.serviceName
  )
    return l;
  return { ...l, severityText, eventName, body, attributes, resource, scope, serviceName };
}

type Scope = SpanRecord['scope'];

function storableScope(scope: Scope, shared: Map<Attributes, Attributes>): Scope {
  const name = storableString(scope.name);
  const version = storableString(scope.version);
  const attributes = sharedAttributes(scope.attributes, shared);
  return name === scope.name && version === scope.version && attributes === scope.attributes
    ? scope
    : { name, version, attributes };
}

/**
 * Resource and scope attributes are one frozen object shared by every record of a request
 * (otlp/values.ts): their replacement is made once, and frozen too, so it is still
 * serialized once (tapes/span-rows.ts).
 */
function sharedAttributes(attributes: Attributes, shared: Map<Attributes, Attributes>): Attributes {
  if (!Object.isFrozen(attributes)) return storableAttributes(attributes);
  let out = shared.get(attributes);
  if (out === undefined) {
    out = storableAttributes(attributes);
    if (out !== attributes) Object.freeze(out);
    shared.set(attributes, out);
  }
  return out;
}

/**
 * Attributes with keys and values replaced. Two keys that become one after replacement keep
 * the later value, as a repeated key does when an OTLP request is decoded.
 */
function storableAttributes(attributes: Attributes): Attributes {
  let changed = false;
  for (const key in attributes) {
    if (!isStorable(key) || storableValue(attributes[key]) !== attributes[key]) {
      changed = true;
      break;
    }
  }
  if (!changed) return attributes;
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    // defineProperty: a "__proto__" key stays an own property (otlp/values.ts setAttribute)
    Object.defineProperty(out, storableString(key), {
      value: storableValue(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** value (an attribute value, or JSON read from one) with its strings and keys replaced; value itself when it has none. */
export function storableValue<T extends AttributeValue>(value: T): T;
export function storableValue(value: AttributeValue): AttributeValue {
  if (typeof value === 'string') return storableString(value);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return mapSame(value, storableValue);
  return storableAttributes(value);
}

/** items.map(f), or items itself when f returned every item unchanged. */
function mapSame<T>(items: T[], f: (item: T) => T): T[] {
  let out: T[] | null = null;
  for (let i = 0; i < items.length; i++) {
    const next = f(items[i]);
    if (next !== items[i]) {
      out ??= items.slice();
      out[i] = next;
    }
  }
  return out ?? items;
}
