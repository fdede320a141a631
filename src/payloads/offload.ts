/**
 * @module payloads/offload
 * Moves large step values into the payload store and leaves {"$payload": "sha256/<hex>"}
 * in their place (docs/architecture.md "Payload store"). What this returns is the stored form; its
 * digests describe the logical value, before offloading, so a step's identity does not depend
 * on --payload-threshold-bytes or the backend, and replay (which digests the resolved prompt)
 * computes the same one.
 *
 * The rules:
 * - A request or response whose canonical JSON (RFC 8785) is longer than thresholdBytes
 *   (UTF-8) is stored whole: its bytes are that canonical JSON, media type application/json.
 *   Its name is therefore "sha256/" + the SHA-256 of that JSON: the value's digest, unless it
 *   holds JSON-shaped text (digests read that as JSON: normalize/comparable.ts).
 * - An llm request (a message list) that starts with system messages keeps them inline and
 *   stores only the rest: [system…, {"$payload": ref-of-the-rest}]. That is how
 *   gen_ai.system_instructions beside an offloaded gen_ai.input.messages is stored (the
 *   normalizer has already folded the instructions into leading system messages), so the
 *   system prompt stays readable without the store. The rule keys on leading system
 *   messages rather than on where they came from, so a layout that carried the system prompt
 *   as message 0 produces the same stored form (layout independence).
 *   When the system messages alone exceed the threshold, the whole list is stored instead.
 * - A value that would read as one of those references if it stayed inline (user content
 *   shaped like {"$payload": "sha256/<hex>"}, stored-reference.ts) is stored whole whatever its
 *   size, so the only references at those places are tapedeck's own and the user's text reads
 *   back as it was.
 * Other values at or under the threshold, and null (not recorded), are left as they are.
 *
 * Resolution (inlining references again) lives in resolve-payloads.ts; index.ts exports
 * both halves of the format.
 */
import { canonicalJson, sha256Hex } from '../json/canonical.js';
import type { PayloadRef } from '../normalize/step.js';
import { comparableDigest } from '../normalize/comparable.js';
import type { JsonValue } from '../json/json-value.js';
import type { PayloadStore } from './payload-store.js';
import { countLeadingSystemMessages } from './system-prefix.js';
import { mistakableForReference } from './stored-reference.js';

export const JSON_MEDIA_TYPE = 'application/json';

/** The parts of a step draft offloading reads; other fields are carried through unchanged. */
export interface OffloadableDraft {
  /** 'llm' turns on the leading-system-messages rule for the request. */
  kind?: string;
  request: JsonValue | null;
  response: JsonValue | null;
}

export interface OffloadedPayload {
  field: 'request' | 'response';
  ref: string;
  sizeBytes: number;
}

export interface OffloadResult<T extends OffloadableDraft> {
  /** The draft in its stored form: request and response possibly replaced by references. */
  draft: T;
  /** What was put in the store, in order (request first). Empty when nothing was offloaded. */
  payloads: OffloadedPayload[];
  /**
   * The digests of the values as they came in, in comparable form (never of the
   * references left behind). Offloading has to canonicalise each value to measure it, so it
   * hands the digests over rather than making the caller canonicalise a second time.
   */
  requestDigest: string | null;
  responseDigest: string | null;
}

export async function offloadLargeValues<T extends OffloadableDraft>(
  draft: T,
  store: PayloadStore,
  thresholdBytes: number,
): Promise<OffloadResult<T>> {
  if (!(thresholdBytes >= 0))
    throw new RangeError(`thresholdBytes must be a non-negative number, got ${thresholdBytes}`);
  const payloads: OffloadedPayload[] = [];
  const request = await offloadValue(draft.request, store, thresholdBytes, draft.kind === 'llm');
  const response = await offloadValue(draft.response, store, thresholdBytes, false);
  if (request.payload) payloads.push({ field: 'request', ...request.payload });
  if (response.payload) payloads.push({ field: 'response', ...response.payload });
  return {
    // The caller's draft is never modified; an unchanged draft is returned as it came.
    draft: payloads.length === 0 ? draft : { ...draft, request: request.stored, response: response.stored },
    payloads,
    requestDigest: request.digest,
    responseDigest: response.digest,
  };
}

interface OffloadedValue {
  stored: JsonValue | null;
  digest: string | null;
  payload?: { ref: string; sizeBytes: number };
}

async function offloadValue(
  value: JsonValue | null,
  store: PayloadStore,
  thresholdBytes: number,
  isLlmRequest: boolean,
): Promise<OffloadedValue> {
  if (value === null) return { stored: null, digest: null };
  const text = canonicalJson(value);
  const digest = comparableDigest(value, sha256Hex(text));
  const mistakable = mistakableForReference(value);
  if (!mistakable && fitsInUtf8(text, thresholdBytes)) return { stored: value, digest };

  if (isLlmRequest && Array.isArray(value)) {
    const lead = countLeadingSystemMessages(value);
    const head = value.slice(0, lead);
    // Some messages must be left to offload, and the inline part must itself be small.
    if (!mistakable && lead > 0 && lead < value.length && fitsInUtf8(canonicalJson(head), thresholdBytes)) {
      const payload = await putJson(store, canonicalJson(value.slice(lead)));
      return { stored: [...head, refTo(payload.ref)], digest, payload };
    }
  }
  const payload = await putJson(store, text);
  return { stored: refTo(payload.ref), digest, payload };
}

async function putJson(store: PayloadStore, text: string): Promise<{ ref: string; sizeBytes: number }> {
  const bytes = Buffer.from(text, 'utf8');
  return { ref: await store.put(bytes, JSON_MEDIA_TYPE), sizeBytes: bytes.byteLength };
}

function refTo(ref: string): PayloadRef & { [key: string]: JsonValue } {
  return { $payload: ref };
}

/**
 * Whether text takes at most `limit` bytes in UTF-8, measured only when in doubt: a UTF-16
 * unit takes 1 to 3 bytes, so text of n units takes n to 3n. (Measuring a long prompt costs
 * about as much as hashing it.)
 */
export function fitsInUtf8(text: string, limit: number): boolean {
  if (text.length > limit) return false;
  return text.length * 3 <= limit || Buffer.byteLength(text, 'utf8') <= limit;
}
