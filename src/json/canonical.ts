/**
 * @module json/canonical
 * Digests and the server's JSON rendering.
 * - digestOf: lower-case hex SHA-256 of RFC 8785 (JCS) canonical JSON, via `canonicalize`.
 * - renderJson: sorted keys, bigint emitted as an exact JSON integer (nanosecond times must
 *   never be rounded through a double), undefined dropped like JSON.stringify does.
 */
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import type { JsonValue } from '../normalize/step.js';

// The package is CommonJS (`module.exports = fn`) but its types declare a default export.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export function canonicalJson(value: JsonValue): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no canonical JSON form');
  return text;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** SHA-256 of the canonical JSON of value; null stays null (not recorded). */
export function digestOf(value: JsonValue | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return sha256Hex(canonicalJson(value));
}

/** Serialize with sorted keys; bigint becomes a bare integer. Optional indent. */
export function renderJson(value: unknown, indent = 0): string {
  const out: string[] = [];
  write(value, indent, '', out);
  return out.join('');
}

function write(value: unknown, indent: number, pad: string, out: string[]): void {
  if (value === null) { out.push('null'); return; }
  switch (typeof value) {
    case 'bigint': out.push(value.toString()); return;
    case 'number': out.push(Number.isFinite(value) ? JSON.stringify(value) : 'null'); return;
    case 'string': case 'boolean': out.push(JSON.stringify(value)); return;
    case 'undefined': case 'function': case 'symbol': out.push('null'); return;
  }
  const inner = indent ? pad + ' '.repeat(indent) : '';
  const nl = indent ? '\n' : '';
  const colon = indent ? ': ' : ':';
  if (Array.isArray(value)) {
    if (value.length === 0) { out.push('[]'); return; }
    out.push('[', nl);
    value.forEach((item, i) => {
      if (i) out.push(',', nl);
      out.push(inner);
      write(item, indent, inner, out);
    });
    out.push(nl, pad, ']');
    return;
  }
  if (value instanceof Uint8Array) { out.push(JSON.stringify(Buffer.from(value).toString('base64'))); return; }
  const obj = (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    ? (value as { toJSON(): unknown }).toJSON() : value;
  if (obj !== value) { write(obj, indent, pad, out); return; }
  const keys = Object.keys(obj as object).filter((k) => (obj as Record<string, unknown>)[k] !== undefined).sort();
  if (keys.length === 0) { out.push('{}'); return; }
  out.push('{', nl);
  keys.forEach((k, i) => {
    if (i) out.push(',', nl);
    out.push(inner, JSON.stringify(k), colon);
    write((obj as Record<string, unknown>)[k], indent, inner, out);
  });
  out.push(nl, pad, '}');
}
