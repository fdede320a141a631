/**
 * @module json/canonical
 * Digests and the server's JSON rendering (docs/architecture.md "Digests and fingerprints").
 * - canonicalJson: RFC 8785 (JCS) canonical JSON of a JSON value; digestOf: its lower-case hex
 *   SHA-256.
 * - renderJson: sorted keys, bigint emitted as an exact JSON integer (nanosecond times must
 *   never be rounded through a double), undefined dropped like JSON.stringify does, and
 *   RecordedJson written as the recorded text it holds (a replayed tool input, byte for byte).
 *
 * Why canonicalJson is written here rather than taken from the `canonicalize` package, which
 * the tests keep as its oracle (test/unit/json/canonical.test.ts): ingest canonicalizes every
 * step's request and response, where the prompts are, and writes their strings with
 * json-string.ts, several times quicker than JSON.stringify for long text. RFC 8785 is
 * otherwise JSON.stringify's own rendering: ECMAScript number serialization, the same string
 * escapes, object members sorted by the UTF-16 code units of their names.
 */
import crypto from 'node:crypto';
import type { JsonValue } from './json-value.js';
import { memberJson, TextSink, writeJsonString, type ByteSink } from './json-string.js';
import { ByteScratch } from './byte-scratch.js';

export function canonicalJson(value: JsonValue): string {
  const sink = new TextSink();
  serializeInto(value, sink);
  return sink.text;
}

/**
 * The UTF-8 bytes of canonicalJson(value), written as bytes: what ingest hashes and stores
 * for a step's request and response. A prompt's text goes from the string escaper's memory
 * into them with no string built for its JSON, nor for the whole (which hashing or writing
 * a string made of pieces would first copy into one).
 */
export function canonicalJsonBytes(value: JsonValue): Buffer {
  const sink = scratch;
  sink.length = 0;
  try {
    serializeInto(value, sink);
    // Small values share Node's pool (a buffer of its own costs an ArrayBuffer each): whatever
    // clones them to another thread copies them out first (derive-worker.ts).
    const out = Buffer.allocUnsafe(sink.length);
    sink.buffer.copy(out, 0, 0, sink.length);
    return out;
  } finally {
    sink.shrink();
  }
}

/**
 * canonicalJsonBytes of a list, with where each element's JSON starts and ends in it
 * (`bounds[2i]`, `bounds[2i + 1]`): one walk and one buffer for a step's message list, whose
 * elements the message store keeps apart. `known`: an element's canonical JSON when the
 * caller has it already (written as it is, not walked again).
 */
export function canonicalListBytes(
  values: readonly JsonValue[],
  known?: (value: JsonValue) => Uint8Array | undefined,
): { bytes: Buffer; bounds: number[] } {
  const sink = scratch;
  sink.length = 0;
  const bounds: number[] = [];
  try {
    sink.utf8('[');
    for (let i = 0; i < values.length; i++) {
      if (i > 0) sink.utf8(',');
      bounds.push(sink.length);
      const bytes = known?.(values[i]);
      if (bytes) sink.bytes(bytes);
      else serializeInto(values[i], sink);
      bounds.push(sink.length);
    }
    sink.utf8(']');
    const out = Buffer.allocUnsafe(sink.length);
    sink.buffer.copy(out, 0, 0, sink.length);
    return { bytes: out, bounds };
  } finally {
    sink.shrink();
  }
}

const scratch = new ByteScratch();

/** RFC 8785 into a sink: the one walk both forms share. */
function serializeInto(value: unknown, sink: ByteSink): void {
  switch (typeof value) {
    case 'string':
      writeJsonString(value, sink);
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
      sink.utf8(JSON.stringify(value));
      return;
    case 'boolean':
      sink.utf8(value ? 'true' : 'false');
      return;
    case 'object':
      break;
    default:
      throw new TypeError(`a ${typeof value} has no JSON form`);
  }
  if (value === null) {
    sink.utf8('null');
    return;
  }
  if (Array.isArray(value)) {
    sink.utf8('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) sink.utf8(',');
      const item: unknown = value[i];
      if (item === undefined) sink.utf8('null');
      else serializeInto(item, sink);
    }
    sink.utf8(']');
    return;
  }
  const object = value as Record<string, unknown>;
  sink.utf8('{');
  let first = true;
  for (const key of sortedKeys(object)) {
    if (object[key] === undefined) continue;
    if (!first) sink.utf8(',');
    sink.utf8(memberJson(key));
    first = false;
    serializeInto(object[key], sink);
  }
  sink.utf8('}');
}

/** crypto.hash (Node 20.12+): one call, no Hash object; about 1 µs less per digest. */
const oneShot = (
  crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex' | 'buffer') => string | Buffer }
).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? (oneShot('sha256', data, 'hex') as string) : crypto.createHash('sha256').update(data).digest('hex');
}

/** The SHA-256 of data, as 32 bytes. */
export function sha256Bytes(data: Uint8Array): Buffer {
  return oneShot ? (oneShot('sha256', data, 'buffer') as Buffer) : crypto.createHash('sha256').update(data).digest();
}

/**
 * SHA-256 of the canonical JSON of value; null stays null (not recorded). The JSON is hashed
 * where it was written (canonicalJsonBytes's buffer), with no string built for it.
 */
export function digestOf(value: JsonValue | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const sink = scratch;
  sink.length = 0;
  try {
    serializeInto(value, sink);
    return sha256Hex(sink.buffer.subarray(0, sink.length));
  } finally {
    sink.shrink();
  }
}

/**
 * JSON text as it was recorded, to be written into a rendered document as it is: the caller
 * checked that it is one JSON value (parseRecordedJson), so the document stays JSON, and its
 * numbers, spacing and key order reach the reader unchanged.
 */
export class RecordedJson {
  private constructor(readonly text: string) {}

  /** The text as a RecordedJson when it is one JSON object, else undefined. */
  static ofObject(text: string): RecordedJson | undefined {
    try {
      const v: unknown = JSON.parse(text);
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? new RecordedJson(text) : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * JSON text already in renderJson's form (json/canonical-text.ts checked it, or renderJson
 * wrote it), to be written into a rendered document as it is: one value, or the elements of
 * a list, written with commas in brackets. A stored request or response is spliced into a
 * tape this way instead of being parsed into objects and written out again.
 */
export class RenderedJson {
  constructor(
    readonly pieces: readonly JsonPiece[],
    readonly list: boolean,
  ) {}
}

/**
 * One value's JSON text, whole or as fragments to be written one after the other (a stored
 * answer with its finish_reason spliced in: tapes/answer-turns.ts), which spares building
 * the joined string.
 */
export type JsonPiece = string | readonly string[];

/** A piece's text, joined. */
export function pieceText(piece: JsonPiece): string {
  return typeof piece === 'string' ? piece : piece.join('');
}

/** Serialize with sorted keys; bigint becomes a bare integer. Optional indent. */
export function renderJson(value: unknown, indent = 0): string {
  if (indent === 0) {
    // one pass appending to one string, member names from memberJson's cache
    const sink = new TextSink();
    renderInto(value, sink);
    return sink.text;
  }
  const out: string[] = [];
  write(value, indent, '', out);
  return out.join('');
}

/**
 * The record's keys in UTF-16 code unit order (RFC 8785's, and Array.prototype.sort's for
 * strings). Messages and their parts have a handful of keys, for which an insertion sort is
 * several times quicker than sort(): serializing a request spent more on sort() than on its
 * strings.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[j] > key) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * renderJson(value) as UTF-8 bytes, written into a reused buffer: for answers of megabytes
 * (a long tape), where appending to a string leaves the collector pieces to join and free.
 */
export function renderJsonBytes(value: unknown): Buffer {
  const sink = renderScratch;
  sink.length = 0;
  try {
    renderInto(value, sink);
    const out = Buffer.allocUnsafe(sink.length);
    sink.buffer.copy(out, 0, 0, sink.length);
    return out;
  } finally {
    sink.shrink();
  }
}

const renderScratch = new ByteScratch();

/** Stored JSON text (RenderedJson) into a sink: its one piece, or its pieces as a list. */
export function renderedInto(json: RenderedJson, sink: ByteSink): void {
  if (!json.list) {
    pieceInto(json.pieces[0], sink);
    return;
  }
  sink.utf8('[');
  for (let i = 0; i < json.pieces.length; i++) {
    if (i > 0) sink.utf8(',');
    pieceInto(json.pieces[i], sink);
  }
  sink.utf8(']');
}

function pieceInto(piece: JsonPiece, sink: ByteSink): void {
  if (typeof piece === 'string') sink.utf8(piece);
  else for (const fragment of piece) sink.utf8(fragment);
}

/** renderJson's writing into a sink (renderJsonBytes's, a JsonBytesWriter's). */
export function renderInto(value: unknown, sink: ByteSink): void {
  if (value === null) {
    sink.utf8('null');
    return;
  }
  switch (typeof value) {
    case 'bigint':
      sink.utf8(value.toString());
      return;
    case 'number':
      sink.utf8(Number.isFinite(value) ? JSON.stringify(value) : 'null');
      return;
    case 'string':
      writeJsonString(value, sink);
      return;
    case 'boolean':
      sink.utf8(value ? 'true' : 'false');
      return;
    case 'undefined':
    case 'function':
    case 'symbol':
      sink.utf8('null');
      return;
  }
  if (Array.isArray(value)) {
    sink.utf8('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) sink.utf8(',');
      renderInto(value[i], sink);
    }
    sink.utf8(']');
    return;
  }
  if (value instanceof RecordedJson) {
    sink.utf8(value.text);
    return;
  }
  if (value instanceof RenderedJson) {
    renderedInto(value, sink);
    return;
  }
  if (value instanceof Uint8Array) {
    sink.utf8(JSON.stringify(Buffer.from(value).toString('base64')));
    return;
  }
  const obj =
    typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  if (obj !== value) {
    renderInto(obj, sink);
    return;
  }
  const record = obj as Record<string, unknown>;
  sink.utf8('{');
  let first = true;
  for (const k of sortedKeys(record)) {
    const v = record[k];
    if (v === undefined) continue;
    sink.utf8(first ? memberJson(k) : `,${memberJson(k)}`);
    first = false;
    renderInto(v, sink);
  }
  sink.utf8('}');
}

function write(value: unknown, indent: number, pad: string, out: string[]): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'bigint':
      out.push(value.toString());
      return;
    case 'number':
      out.push(Number.isFinite(value) ? JSON.stringify(value) : 'null');
      return;
    case 'string':
    case 'boolean':
      out.push(JSON.stringify(value));
      return;
    case 'undefined':
    case 'function':
    case 'symbol':
      out.push('null');
      return;
  }
  const inner = indent ? pad + ' '.repeat(indent) : '';
  const nl = indent ? '\n' : '';
  const colon = indent ? ': ' : ':';
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push('[]');
      return;
    }
    out.push('[', nl);
    value.forEach((item, i) => {
      if (i) out.push(',', nl);
      out.push(inner);
      write(item, indent, inner, out);
    });
    out.push(nl, pad, ']');
    return;
  }
  if (value instanceof RecordedJson) {
    out.push(value.text);
    return;
  }
  if (value instanceof RenderedJson) {
    // indented: the value it spells, written with the rest
    const pieces = value.pieces.map((p) => JSON.parse(pieceText(p)) as unknown);
    write(value.list ? pieces : pieces[0], indent, pad, out);
    return;
  }
  if (value instanceof Uint8Array) {
    out.push(JSON.stringify(Buffer.from(value).toString('base64')));
    return;
  }
  const obj =
    typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  if (obj !== value) {
    write(obj, indent, pad, out);
    return;
  }
  const keys = Object.keys(obj as object)
    .filter((k) => (obj as Record<string, unknown>)[k] !== undefined)
    .sort();
  if (keys.length === 0) {
    out.push('{}');
    return;
  }
  out.push('{', nl);
  keys.forEach((k, i) => {
    if (i) out.push(',', nl);
    out.push(inner, JSON.stringify(k), colon);
    write((obj as Record<string, unknown>)[k], indent, inner, out);
  });
  out.push(nl, pad, '}');
}
