/**
 * @module normalize/comparable
 * The form a value is compared and digested in (docs/architecture.md "Digests and
 * fingerprints"). Steps keep JSON-shaped text as it was recorded (message content, tool-call
 * arguments, a tool's input and output), so what is stored and served is byte for byte what
 * the instrumentation saw; one layout may still record as text what another records as a
 * structured value, and spacing, escaping and number spelling differ by layout. Comparisons
 * therefore read every JSON-shaped string as the value it spells, at any depth (text inside
 * parsed JSON included), and digest that.
 *
 * Nothing is copied when a value holds no JSON-shaped text, so the common case costs one walk
 * and the caller can reuse the stored form's digest (comparableForm(v) === v).
 */
import { digestOf } from '../json/canonical.js';
import type { JsonValue } from '../json/json-value.js';
import { readJsonShaped } from './attrs.js';

/** The value with every JSON-shaped string replaced by its parsed value; the value itself when none is. */
export function comparableForm(value: JsonValue): JsonValue {
  if (typeof value === 'string') {
    const parsed = readJsonShaped(value);
    return parsed === value ? value : comparableForm(parsed);
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: JsonValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = comparableForm(value[i]);
      if (item !== value[i]) out ??= value.slice();
      if (out) out[i] = item;
    }
    return out ?? value;
  }
  let out: { [k: string]: JsonValue } | undefined;
  for (const key of Object.keys(value)) {
    const item = comparableForm(value[key]);
    if (item !== value[key]) out ??= { ...value };
    if (out) out[key] = item;
  }
  return out ?? value;
}

/**
 * The digest of a value's comparable form; null stays null (not recorded). `storedDigest`,
 * the digest of the value's own canonical JSON when the caller has it, is returned when the
 * value holds no JSON-shaped text (the two forms are then the same bytes).
 */
export function comparableDigest(value: JsonValue | null, storedDigest?: string | null): string | null {
  if (value === null) return null;
  const form = comparableForm(value);
  return form === value && storedDigest ? storedDigest : digestOf(form);
}
