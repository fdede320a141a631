/**
 * @module json/json-string
 * A string's JSON (what JSON.stringify gives for it), quicker for long ASCII text: prompts
 * and answers, which ingest writes as JSON twice (the span's attributes, the step's canonical
 * request). JSON.stringify of a string costs the same per character, escapes or not;
 * json-string.wat finds the runs that need none 16 bytes at a time and copies them, several
 * times faster even with the copies in and out (test/unit/json/json-string.test.ts holds the
 * two equal; docs/benchmarks.md has the figures).
 *
 * Only ASCII text goes through the module: its bytes are its characters, read back as a
 * one-byte string. Anything else (and short text, where the hand-over costs more than it
 * saves) is JSON.stringify's, as is everything where WebAssembly SIMD cannot run.
 */
import { JSON_STRING_WASM } from './json-string-wasm.js';
import { compileWasm, instantiateWasm } from '../wasm-module.js';

/** Shorter strings are left to JSON.stringify. */
export const WASM_MIN_CHARS = 64;
/** Characters handed to the module at once (its memory has room for this many and their JSON). */
const PIECE = 64 * 1024;
const TEXT_AT = 1024;
const JSON_AT = TEXT_AT + PIECE;

interface Exports {
  memory: { buffer: ArrayBuffer };
  escape(from: number, n: number, to: number): number;
}

/** Per byte: 0 when JSON writes it as it is, else the character after its backslash. */
function escapeTable(): Uint8Array {
  const table = new Uint8Array(256);
  for (let c = 0; c < 0x20; c++) table[c] = 'u'.charCodeAt(0);
  const short: Record<string, string> = { '\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\' };
  for (const [c, e] of Object.entries(short)) table[c.charCodeAt(0)] = e.charCodeAt(0);
  return table;
}

function instantiate(): { wasm: Exports; memory: Buffer } | null {
  // null where WebAssembly SIMD does not compile: JSON.stringify does the same (server.ts warns)
  const compiled = compileWasm(JSON_STRING_WASM);
  if (!compiled) return null;
  const wasm = instantiateWasm<Exports>(compiled);
  const memory = Buffer.from(wasm.memory.buffer);
  memory.set(escapeTable(), 0);
  memory.write('0123456789abcdef', 256, 'latin1');
  return { wasm, memory };
}

const module = instantiate();

/** Whether the WebAssembly module runs here (else every string is JSON.stringify's, about 8x slower). */
export const JSON_STRING_WASM_LOADED = module !== null;

/** Whether text goes through the module: long enough, all ASCII, and the module runs here. */
function escapable(text: string): boolean {
  return module !== null && text.length >= WASM_MIN_CHARS && Buffer.byteLength(text, 'utf8') === text.length;
}

/**
 * Escapes text (escapable), PIECE characters at a time: `take` gets each piece's JSON, a
 * view of the module's memory valid until the next piece.
 */
function escapePieces(text: string, take: (json: Buffer) => void): void {
  const { wasm, memory } = module!;
  for (let at = 0; at < text.length; at += PIECE) {
    const piece = text.length <= PIECE ? text : text.slice(at, at + PIECE);
    memory.write(piece, TEXT_AT, 'latin1');
    take(memory.subarray(JSON_AT, JSON_AT + wasm.escape(TEXT_AT, piece.length, JSON_AT)));
  }
}

/** JSON.stringify(text), for a string. */
export function jsonString(text: string): string {
  if (!escapable(text)) return JSON.stringify(text);
  let out = '"';
  escapePieces(text, (json) => {
    out += json.toString('latin1');
  });
  return `${out}"`;
}

/**
 * A member's name as JSON, with its colon (`"role":`). Objects repeat a few names (role,
 * parts, type, content, ...), so the first MEMBER_NAMES short ones met are kept rather than
 * escaped again each time. Names are the sender's (attribute keys, tool arguments), hence
 * both bounds: at most MEMBER_NAMES names of at most MEMBER_NAME_CHARS each are kept (under
 * 1 MiB); a longer name costs about as much to escape as to look up.
 */
export function memberJson(key: string): string {
  let name = memberNames.get(key);
  if (name !== undefined) return name;
  name = `${jsonString(key)}:`;
  if (key.length <= MEMBER_NAME_CHARS && memberNames.size < MEMBER_NAMES) memberNames.set(key, name);
  return name;
}

export const MEMBER_NAMES = 4096;
export const MEMBER_NAME_CHARS = 64;
const memberNames = new Map<string, string>();

/** How many member names memberJson keeps now (for its tests). */
export function keptMemberNames(): number {
  return memberNames.size;
}

/** Where writeJsonString appends: UTF-8 bytes as they are, or text to encode. */
export interface ByteSink {
  bytes(chunk: Uint8Array): void;
  utf8(text: string): void;
}

/**
 * A sink that gathers the text, for a JSON writer's string form (canonicalJson, toJsonText).
 * The escaper's bytes are ASCII JSON, so latin1 reads them back.
 */
export class TextSink implements ByteSink {
  text = '';

  bytes(chunk: Uint8Array): void {
    this.text += Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
  }

  utf8(text: string): void {
    this.text += text;
  }
}

/**
 * Appends the UTF-8 bytes of JSON.stringify(text) to sink: for long ASCII text, the escaped
 * bytes straight from the module's memory, with no string built for them.
 */
export function writeJsonString(text: string, sink: ByteSink): void {
  if (!escapable(text)) {
    sink.utf8(JSON.stringify(text));
    return;
  }
  sink.utf8('"');
  escapePieces(text, (json) => sink.bytes(json));
  sink.utf8('"');
}
