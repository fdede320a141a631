/**
 * @module diff/compare
 * Interruptible comparison of configuration values.
 *
 * A step's `params` is arbitrary JSON an instrumentation recorded (`gen_ai.request.*`), so one
 * value can be large (a long stop list, a JSON schema) and a step can carry many. Comparing
 * them whole must not run past the request's deadline: `jsonEqual` walks both values with an
 * explicit stack, ticking once per node, and compares long strings in slices, ticking between
 * them. Object keys compare as sets (key order is not a difference).
 */
import type { JsonValue } from '../json/json-value.js';

const STRING_SLICE = 64 * 1024;

/** Structural JSON equality that calls `tick` as it goes (tick throws to stop it). */
export function jsonEqual(x: JsonValue | undefined, y: JsonValue | undefined, tick: () => void): boolean {
  const stack: Array<[JsonValue | undefined, JsonValue | undefined]> = [[x, y]];
  while (stack.length > 0) {
    tick();
    const [p, q] = stack.pop() as [JsonValue | undefined, JsonValue | undefined];
    if (p === q) continue;
    if (p === null || q === null || p === undefined || q === undefined) return false;
    if (typeof p !== typeof q) return false;
    if (typeof p === 'string') {
      if (!stringEqual(p, q as string, tick)) return false;
      continue;
    }
    if (typeof p !== 'object') return false; // numbers and booleans: === already said no
    const qo = q as JsonValue[] | { [key: string]: JsonValue };
    if (Array.isArray(p)) {
      if (!Array.isArray(qo) || p.length !== qo.length) return false;
      for (let i = 0; i < p.length; i++) stack.push([p[i], qo[i]]);
      continue;
    }
    if (Array.isArray(qo)) return false;
    const keys = Object.keys(p);
    if (keys.length !== Object.keys(qo).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(qo, key)) return false;
      stack.push([p[key], qo[key]]);
    }
  }
  return true;
}

function stringEqual(p: string, q: string, tick: () => void): boolean {
  if (p.length !== q.length) return false;
  if (p.length <= STRING_SLICE) return p === q;
  for (let at = 0; at < p.length; at += STRING_SLICE) {
    tick();
    if (p.slice(at, at + STRING_SLICE) !== q.slice(at, at + STRING_SLICE)) return false;
  }
  return true;
}

type Params = { readonly [key: string]: JsonValue };

/** True when both configurations hold the same parameters with equal values. */
export function paramsEqual(a: Params, b: Params, tick: () => void): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    tick();
    if (!Object.hasOwn(b, key) || !jsonEqual(a[key], b[key], tick)) return false;
  }
  return true;
}

/** Every parameter either side set, and the names of those that differ (sorted). */
export function differingParams(a: Params, b: Params, tick: () => void): { total: number; differ: string[] } {
  const names = new Set<string>();
  for (const key of Object.keys(a)) names.add(key);
  for (const key of Object.keys(b)) names.add(key);
  const differ: string[] = [];
  for (const key of names) {
    tick();
    const x = Object.hasOwn(a, key) ? a[key] : undefined;
    const y = Object.hasOwn(b, key) ? b[key] : undefined;
    if (!jsonEqual(x, y, tick)) differ.push(key);
  }
  differ.sort();
  return { total: names.size, differ };
}
