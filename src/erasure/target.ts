/**
 * @module erasure/target
 * What POST /v1/erasures may name, read from its body: exactly one of a run, a trace, a span,
 * a tenant, a payload or an end user. Anything else is refused naming what was expected.
 */
import { ApiError } from '../errors.js';
import { storedRunId } from '../http/query-params.js';
import { isValidPayloadRef } from '../payloads/payload-store.js';
import { storableString } from '../spans/storable-text.js';

export type ErasureTarget = { body: Record<string, unknown> } & (
  | { scope: 'run'; run: string }
  | { scope: 'trace_id'; traceId: string }
  | { scope: 'span'; traceId: string; spanId: string }
  | { scope: 'tenant'; tenant: string }
  | { scope: 'payload'; payload: string }
  | { scope: 'user'; user: string }
);

const EXPECTED =
  'the body must be one of {"run": RUN}, {"trace_id": HEX}, {"span": {"trace_id": HEX, "span_id": HEX}}, {"tenant": T}, {"payload": "sha256/HEX"}, {"user": ID}';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;

export function readErasureTarget(body: unknown): ErasureTarget {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad(EXPECTED);
  const keys = Object.keys(body);
  if (keys.length !== 1) throw bad(`${EXPECTED}; got ${keys.length === 0 ? 'no key' : `keys ${keys.join(', ')}`}`);
  const b = body as Record<string, unknown>;
  const text = (name: string, value: unknown): string => {
    if (typeof value !== 'string' || value === '') throw bad(`"${name}" must be a non-empty string`);
    return value;
  };
  const hex = (name: string, value: unknown, pattern: RegExp, digits: number): string => {
    const v = text(name, value).toLowerCase();
    if (!pattern.test(v)) throw bad(`"${name}" must be ${digits} hex digits, got ${JSON.stringify(value)}`);
    return v;
  };
  switch (keys[0]) {
    case 'run':
      return { body: b, scope: 'run', run: storedRunId(text('run', b.run)) };
    case 'trace_id':
      return { body: b, scope: 'trace_id', traceId: hex('trace_id', b.trace_id, TRACE_ID, 32) };
    case 'span': {
      const span = b.span as Record<string, unknown> | null;
      if (typeof span !== 'object' || span === null || Array.isArray(span))
        throw bad('"span" must be {"trace_id": HEX, "span_id": HEX}');
      return {
        body: b,
        scope: 'span',
        traceId: hex('span.trace_id', span.trace_id, TRACE_ID, 32),
        spanId: hex('span.span_id', span.span_id, SPAN_ID, 16),
      };
    }
    case 'tenant':
      return { body: b, scope: 'tenant', tenant: storableString(text('tenant', b.tenant)) };
    case 'payload': {
      const payload = text('payload', b.payload);
      if (!isValidPayloadRef(payload))
        throw bad(`"payload" must be "sha256/" and 64 lower-case hex digits, got ${JSON.stringify(payload)}`);
      return { body: b, scope: 'payload', payload };
    }
    case 'user':
      return { body: b, scope: 'user', user: storableString(text('user', b.user)) };
    default:
      throw bad(`${EXPECTED}; got ${JSON.stringify(keys[0])}`);
  }
}

function bad(message: string): ApiError {
  return new ApiError('bad_input', message);
}
