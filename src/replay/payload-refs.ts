/**
 * @module replay/payload-refs
 * Reading {"$payload": "sha256/..."} references while a replay is built or explained. Only
 * the references tapedeck wrote are read: the whole stored value, or the tail of
 * [system…, ref] (payloads/stored-reference.ts). Anything else shaped like one is recorded
 * content and is served as recorded.
 *
 * A payload's bytes are UTF-8 text: the JSON text of the value it replaced, or the raw text of
 * a text attribute. Decoding: JSON when the text parses, otherwise the text itself. Where the
 * value is served as answer text, the raw text is kept (see textOfPayload), so an answer
 * recorded as text comes back byte for byte.
 *
 * Answers and tool records are read up to a byte budget (--tape-max-bytes between them);
 * prompts are read, digested and dropped, so they spend no budget.
 */
import type { JsonValue } from '../json/json-value.js';
import { storedReferenceOf } from '../payloads/stored-reference.js';
import type { ReplayDeps, UnreadableReason } from './settings.js';

export type Unreadable = UnreadableReason | 'budget' | 'unknown';

/** A reference that could not be read; `why` says which of the reasons it was, when known. */
export class UnreadableValue extends Error {
  constructor(
    readonly ref: string,
    readonly why: Unreadable,
    readonly limitBytes: number | null = null,
  ) {
    super(`payload ${ref} ${describeUnreadable(why, limitBytes)}`);
    this.name = 'UnreadableValue';
  }
}

export function describeUnreadable(why: Unreadable, limitBytes: number | null): string {
  switch (why) {
    case 'erased':
      return 'was erased';
    case 'retention':
      return 'was swept by retention';
    case 'budget':
      return `is past --tape-max-bytes (${limitBytes ?? 0} bytes of offloaded answers and tool records per replay)`;
    default:
      return 'could not be read (erased or swept by retention)';
  }
}

const decoder = new TextDecoder('utf-8');

/** JSON when the text parses as JSON, otherwise the text. */
export function decodePayloadText(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** Answer text from a payload: raw text unless it is a JSON string literal (then its value). */
export function textOfPayload(text: string): string {
  const v = decodePayloadText(text);
  return typeof v === 'string' ? v : text;
}

export class PayloadReader {
  private readonly cache = new Map<string, string>();
  private used = 0;

  /** budgetBytes null: unbounded (prompts, which are dropped once digested). */
  constructor(
    private readonly deps: Pick<ReplayDeps, 'readPayload' | 'whyUnreadable'>,
    private readonly budgetBytes: number | null,
  ) {}

  /** Payload bytes read into this reader so far (each distinct reference once). */
  get bytesRead(): number {
    return this.used;
  }

  async text(ref: string): Promise<string> {
    const cached = this.cache.get(ref);
    if (cached !== undefined) return cached;
    const bytes = await this.deps.readPayload(ref);
    if (bytes === undefined) {
      const why = (await this.deps.whyUnreadable?.(ref)) ?? 'unknown';
      throw new UnreadableValue(ref, why);
    }
    if (this.budgetBytes !== null && this.used + bytes.byteLength > this.budgetBytes) {
      throw new UnreadableValue(ref, 'budget', this.budgetBytes);
    }
    this.used += bytes.byteLength;
    const text = decoder.decode(bytes);
    if (this.budgetBytes !== null) this.cache.set(ref, text);
    return text;
  }

  async value(ref: string): Promise<JsonValue> {
    return decodePayloadText(await this.text(ref));
  }

  /** The stored value with the reference tapedeck wrote in it (if any) replaced by what it stands for. */
  async resolveStored(value: JsonValue): Promise<JsonValue> {
    const at = storedReferenceOf(value);
    if (at === null) return value;
    const inlined = await this.value(at.ref);
    if (at.head === null) return inlined;
    return Array.isArray(inlined) ? [...at.head, ...inlined] : [...at.head, inlined];
  }
}
