/**
 * @module cassettes/run-files
 * The shapes of a run's files inside a cassette, shared by export (which writes them) and
 * load (which reads them back): steps as the tape serves them, one JSON object a line; the
 * run's spans reduced to what orders the tape and identifies the run (ids, parent, name,
 * kind, times, status, service), never their attributes; and the recorded timing of its
 * model steps, for timed playback.
 */
import { canonicalJson, renderJson } from '../json/canonical.js';
import type { JsonValue } from '../json/json-value.js';
import type { Step } from '../normalize/step.js';
import { storedReferenceOf } from '../payloads/stored-reference.js';
import { CassetteInvalid } from './format.js';

export interface SpanLine {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  start_ns: bigint;
  end_ns: bigint;
  status: string;
  service: string | null;
}

export interface StepTiming {
  step: number;
  /** from the run's first span start */
  start_offset_ns: bigint;
  duration_ns: bigint;
  /** time to the first streamed chunk, when the instrumentation recorded it */
  first_chunk_ns: bigint | null;
}

export interface RunTiming {
  run_start_ns: bigint;
  steps: StepTiming[];
}

export const jsonLines = (values: readonly unknown[]): Buffer =>
  Buffer.from(values.map((v) => `${renderJson(v)}\n`).join(''), 'utf8');

/** The nanosecond keys of the run files: read as bigint, since they pass 2^53. */
const NS_KEY = /^"(start_ns|end_ns|duration_ns|run_start_ns|start_offset_ns|first_chunk_ns)":(-?\d+)/;

/**
 * Parses a run file's JSON keeping its nanosecond integers exact (JSON.parse on Node 20
 * rounds them through a double). Those keys' values are quoted where they stand as members of
 * the file's own objects (depth 1, and depth 3 inside timing.json's list of steps), never
 * inside recorded content, and read back as bigint.
 */
function parseExact(text: string, nsDepths: readonly number[]): unknown {
  let out = '';
  let depth = 0;
  let inString = false;
  let from = 0;
  const quoted = new Set<string>();
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    else if (ch === '"') {
      const m =
        nsDepths.includes(depth) && (text[i - 1] === '{' || text[i - 1] === ',')
          ? NS_KEY.exec(text.slice(i, i + 64))
          : null;
      if (m) {
        out += `${text.slice(from, i)}"${m[1]}":"${m[2]}"`;
        quoted.add(m[1]);
        i += m[0].length - 1;
        from = i + 1;
        continue;
      }
      inString = true;
    }
  }
  out += text.slice(from);
  const exact = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    for (const [k, x] of Object.entries(v)) {
      if (quoted.has(k) && typeof x === 'string' && /^-?\d+$/.test(x)) (v as Record<string, unknown>)[k] = BigInt(x);
      else if (k === 'steps' && Array.isArray(x)) x.forEach(exact);
    }
    return v;
  };
  return exact(JSON.parse(out));
}

export function readJsonLines(file: string, bytes: Buffer): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const lines = bytes.toString('utf8').split('\n');
  if (lines.pop() !== '') throw new CassetteInvalid(file, 'the last line does not end with a newline');
  for (const [i, line] of lines.entries()) {
    let v: unknown;
    try {
      v = parseExact(line, [1]);
    } catch {
      throw new CassetteInvalid(file, `line ${i + 1} is not valid JSON`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new CassetteInvalid(file, `line ${i + 1} is not a JSON object`);
    out.push(v as Record<string, unknown>);
  }
  return out;
}

export function readJsonFile(file: string, bytes: Buffer): Record<string, unknown> {
  let v: unknown;
  try {
    v = parseExact(bytes.toString('utf8'), [1, 3]);
  } catch {
    throw new CassetteInvalid(file, 'not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CassetteInvalid(file, 'not a JSON object');
  return v as Record<string, unknown>;
}

const big = (v: unknown): bigint => (typeof v === 'bigint' ? v : BigInt(v as number));

/** A step line back to a tape step; the shape is checked where replay and import depend on it. */
export function stepOfLine(file: string, line: Record<string, unknown>, position: number): Step {
  const bad = (why: string) => new CassetteInvalid(file, `step line ${position + 1}: ${why}`);
  if (line.index !== position) throw bad(`"index" must be ${position}`);
  if (line.kind !== 'llm' && line.kind !== 'tool' && line.kind !== 'agent')
    throw bad('"kind" must be llm, tool or agent');
  for (const k of ['trace_id', 'span_id', 'name', 'fingerprint', 'layout', 'status'])
    if (typeof line[k] !== 'string') throw bad(`"${k}" must be a string`);
  if (!/^[0-9a-f]{32}$/.test(line.trace_id as string) || !/^[0-9a-f]{16}$/.test(line.span_id as string))
    throw bad('trace_id and span_id must be lower-case hex ids');
  if (!['bigint', 'number'].includes(typeof line.start_ns) || !['bigint', 'number'].includes(typeof line.duration_ns))
    throw bad('start_ns and duration_ns must be integers');
  if (typeof line.tokens !== 'object' || line.tokens === null) throw bad('"tokens" must be an object');
  return { ...(line as unknown as Step), start_ns: big(line.start_ns), duration_ns: big(line.duration_ns) };
}

export function spanOfLine(file: string, line: Record<string, unknown>, position: number): SpanLine {
  if (
    typeof line.trace_id !== 'string' ||
    !/^[0-9a-f]{32}$/.test(line.trace_id) ||
    typeof line.span_id !== 'string' ||
    !/^[0-9a-f]{16}$/.test(line.span_id) ||
    typeof line.name !== 'string' ||
    typeof line.kind !== 'string' ||
    typeof line.status !== 'string'
  )
    throw new CassetteInvalid(file, `span line ${position + 1}: ids, name, kind and status are required`);
  return {
    ...(line as unknown as SpanLine),
    start_ns: big(line.start_ns),
    end_ns: big(line.end_ns),
  };
}

/**
 * The payload reference tapedeck wrote in a stored value (payloads/stored-reference.ts): a
 * cassette carries that payload and nothing a value merely names.
 */
export function payloadRefsIn(value: JsonValue | null, into: Set<string> = new Set()): Set<string> {
  const at = storedReferenceOf(value);
  if (at !== null) into.add(at.ref);
  return into;
}

/** Canonical JSON bytes of a stored value with its references counted at their payload's size. */
export function decodedBytes(value: JsonValue | null, blobs: ReadonlyMap<string, Buffer>): number {
  if (value === null) return 0;
  let n = Buffer.byteLength(canonicalJson(value));
  for (const ref of payloadRefsIn(value)) {
    const blob = blobs.get(ref);
    // the blob replaces its reference object
    if (blob) n += blob.length - Buffer.byteLength(canonicalJson({ $payload: ref }));
  }
  return n;
}
