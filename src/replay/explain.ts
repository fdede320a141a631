/**
 * @module replay/explain
 * Where an agent's request first parts from the recorded one: the message index, its role,
 * the field (role, content, tool_call_id, tool_calls, or missing / extra when one list is
 * longer), the character where they part, and a quote of each side around it.
 * Pure: both sides arrive as canonical messages.
 */
import type { Message } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { canonicalJson } from '../json/canonical.js';
import { comparableForm } from '../normalize/comparable.js';
import { REQUEST_OPTION_KEYS, type RequestOptions } from '../normalize/request-options.js';

export type DifferenceField =
  | 'role'
  | 'content'
  | 'tool_call_id'
  | 'tool_calls'
  | 'missing'
  | 'extra'
  | 'tools'
  | 'tool_choice'
  | 'response_format';

export interface Difference {
  /** the message index; null for a request option (tools, tool_choice, response_format) */
  message: number | null;
  role: string | null;
  field: DifferenceField;
  /** index, in characters (code points), of the first character that differs */
  at_char: number;
  recorded: string;
  got: string;
}

/** Quotes are cut to this many characters around the difference. */
export const QUOTE_CHARS = 160;
const QUOTE_LEAD = 40;

/** A field as the text the comparison reads: strings as they are, JSON values canonically. */
function textOf(v: JsonValue | undefined): string {
  if (v === undefined) return '';
  return typeof v === 'string' ? v : canonicalJson(v);
}

function firstDifference(a: string[], b: string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

function quote(chars: string[], at: number): string {
  if (chars.length <= QUOTE_CHARS) return chars.join('');
  const start = Math.max(0, Math.min(at - QUOTE_LEAD, chars.length - QUOTE_CHARS));
  const end = start + QUOTE_CHARS;
  return (start > 0 ? '…' : '') + chars.slice(start, end).join('') + (end < chars.length ? '…' : '');
}

function compareField(
  index: number | null,
  role: string | null,
  field: DifferenceField,
  recorded: string,
  got: string,
): Difference {
  const r = Array.from(recorded);
  const g = Array.from(got);
  const at = firstDifference(r, g);
  return { message: index, role, field, at_char: at, recorded: quote(r, at), got: quote(g, at) };
}

function summary(m: Message): string {
  return textOf(m as unknown as JsonValue);
}

/** The first difference between two message lists, or null when they say the same thing. */
export function explainDifference(recorded: readonly Message[], got: readonly Message[]): Difference | null {
  const n = Math.min(recorded.length, got.length);
  for (let i = 0; i < n; i++) {
    const r = recorded[i];
    const g = got[i];
    const role = r.role ?? null;
    if ((r.role ?? '') !== (g.role ?? '')) return compareField(i, role, 'role', r.role ?? '', g.role ?? '');
    const fields: [DifferenceField, JsonValue | undefined, JsonValue | undefined][] = [
      ['content', r.content, g.content],
      ['tool_call_id', r.tool_call_id, g.tool_call_id],
      ['tool_calls', r.tool_calls as JsonValue | undefined, g.tool_calls as JsonValue | undefined],
    ];
    for (const [field, a, b] of fields) {
      // compared as digests compare them: JSON-shaped text as the JSON it spells
      const ta = a === undefined ? undefined : canonicalJson(comparableForm(a));
      const tb = b === undefined ? undefined : canonicalJson(comparableForm(b));
      if (ta !== tb) return compareField(i, role, field, textOf(a), textOf(b));
    }
  }
  if (recorded.length > got.length) {
    const m = recorded[n];
    return {
      message: n,
      role: m.role ?? null,
      field: 'missing',
      at_char: 0,
      recorded: quote(Array.from(summary(m)), 0),
      got: '',
    };
  }
  if (got.length > recorded.length) {
    const m = got[n];
    return {
      message: n,
      role: m.role ?? null,
      field: 'extra',
      at_char: 0,
      recorded: '',
      got: quote(Array.from(summary(m)), 0),
    };
  }
  return null;
}

/**
 * The first request option (tools, tool_choice, response_format, in that order) the agent's
 * request sends differently from the recording, as canonical JSON; null when they agree.
 */
export function explainOptionsDifference(recorded: RequestOptions, got: RequestOptions): Difference | null {
  for (const field of REQUEST_OPTION_KEYS) {
    const r = recorded[field] === undefined ? '' : canonicalJson(recorded[field] as JsonValue);
    const g = got[field] === undefined ? '' : canonicalJson(got[field] as JsonValue);
    if (r !== g) return compareField(null, null, field, r, g);
  }
  return null;
}
