/**
 * @module cassettes/otlp-json
 * Spans as an OTLP/JSON ExportTraceServiceRequest, for cassettes exported --with-spans, so
 * any OTLP tool (or tapedeck's own receiver) reads them. Attributes that look like
 * credentials (authorization headers, API keys, secrets, passwords, cookies, tokens that are
 * not token counts) are left out of spans, events, resources and scopes alike.
 */
import type { AttributeValue, Attributes, SpanRecord } from '../spans/span-record.js';

const CREDENTIAL_KEY =
  /(^|[._-])(authorization|api[._-]?key|x[._-]api[._-]key|secret|password|passwd|cookie|set[._-]cookie|credentials?|bearer|access[._-]token|refresh[._-]token|session[._-]token|private[._-]key)([._-]|$)/i;

export const isCredentialKey = (key: string): boolean => CREDENTIAL_KEY.test(key);

type AnyValue = Record<string, unknown>;

function anyValue(v: AttributeValue | unknown): AnyValue {
  if (v === null || v === undefined) return {};
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'bigint') return { intValue: v.toString() };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (v instanceof Uint8Array) return { bytesValue: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return { kvlistValue: { values: keyValues(v as Attributes) } };
}

function keyValues(attributes: Attributes): { key: string; value: AnyValue }[] {
  return Object.entries(attributes)
    .filter(([k]) => !isCredentialKey(k))
    .map(([key, value]) => ({ key, value: anyValue(value) }));
}

const STATUS = { UNSET: 0, OK: 1, ERROR: 2 } as Record<string, number>;
const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as Record<string, number>;

export function encodeOtlpJson(spans: readonly SpanRecord[]): Record<string, unknown> {
  return {
    resourceSpans: spans.map((s) => ({
      resource: { attributes: keyValues(s.resource) },
      scopeSpans: [
        {
          scope: { name: s.scope.name, version: s.scope.version, attributes: keyValues(s.scope.attributes) },
          spans: [
            {
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: KIND[s.kind] ?? 0,
              startTimeUnixNano: s.startTimeUnixNano.toString(),
              endTimeUnixNano: s.endTimeUnixNano.toString(),
              attributes: keyValues(s.attributes),
              events: s.events.map((e) => ({
                timeUnixNano: e.timeUnixNano.toString(),
                name: e.name,
                attributes: keyValues(e.attributes),
              })),
              links: s.links.map((l) => ({
                traceId: l.traceId,
                spanId: l.spanId,
                attributes: keyValues(l.attributes),
              })),
              status: { code: STATUS[s.status.code] ?? 0, ...(s.status.message ? { message: s.status.message } : {}) },
            },
          ],
        },
      ],
    })),
  };
}
