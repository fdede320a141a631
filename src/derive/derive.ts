/**
 * @module derive/derive
 * Spans → run facts and stored steps: normalize (pure), then the identities of the values
 * (digests, fingerprint), then offload large values (payload store). Used by ingest and
 * by reindex, so a normalizer fix re-derives exactly what ingest would derive today.
 */
import { createHash, type Hash } from 'node:crypto';
import { DIALECTS } from '../normalize/dialects/index.js';
import { normalizeSpan, NORMALIZER_VERSION, runFactsOf, type DialectErrorHandler } from '../normalize/normalize.js';
import { fingerprintName, fingerprintOf, requestDigestOf, responseDigestOf } from '../normalize/finish.js';
import { canonicalJsonBytes, canonicalListBytes, sha256Bytes, sha256Hex } from '../json/canonical.js';
import type { SpanFacts, StepDraft } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { offloadLargeValues } from '../payloads/offload.js';
import { mistakableForReference } from '../payloads/stored-reference.js';
import { type PayloadStore, PayloadStoreUnavailableError } from '../payloads/payload-store.js';
import { ApiError } from '../errors.js';
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import { ownWordsOf, type StoredMessage, type StoredStep } from '../tapes/step-rows.js';
import type { DeriveSpans, DerivedSpan } from '../tapes/derived-span.js';
import { answerReason, turnOf } from '../tapes/answer-turns.js';
import { storableFacts } from './storable-facts.js';

export interface DeriveDeps {
  payloads: PayloadStore;
  /**
   * told when a dialect throws on a span, or deriving it throws elsewhere (layout
   * DERIVE_FAILED), which is then stored with no step
   */
  onDialectError?: (span: SpanRecord, error: unknown, layout: string) => void;
}

export interface DeriveSettings {
  payloadThresholdBytes: number;
}

export function createDeriveSpans(deps: DeriveDeps, settings: DeriveSettings): DeriveSpans {
  return async (spans, logsOf) => {
    const out: DerivedSpan[] = [];
    const onError = deps.onDialectError;
    // One at a time: offloading may hold a large value's canonical JSON in memory.
    for (const span of spans) {
      let facts: SpanFacts;
      let step: StoredStep | null | undefined;
      try {
        facts = normalizeFacts(span, logsOf(span), onError && ((error, layout) => onError(span, error, layout)));
        step = facts.step && inlineStep(span, facts.step, settings.payloadThresholdBytes);
        // Its value was canonicalised once already, by inlineStep.
        if (step === undefined)
          step = await offloadedStep(span, facts.step!, deps.payloads, settings.payloadThresholdBytes);
      } catch (error) {
        // A payload store that cannot write fails the batch (its sender retries); anything
        // else is the span's own fault (a value nested deeper than the stack, say).
        if (error instanceof PayloadStoreUnavailableError || error instanceof ApiError) throw error;
        onError?.(span, error, DERIVE_FAILED);
        out.push(withoutStep(span));
        continue;
      }
      out.push({ ownRun: facts.ownRun, ownParentRun: facts.parentRun, step });
    }
    return out;
  };
}

/**
 * The layout reported when deriving a span threw outside its dialect (a value nested deeper
 * than the stack, say): the span is stored with no step, as when a dialect throws.
 */
export const DERIVE_FAILED = '(deriving)';

/** A span whose derivation failed: its run facts when they can be read, and no step. */
export function withoutStep(span: SpanRecord): DerivedSpan {
  try {
    const facts = runFactsOf(span);
    return { ownRun: facts.ownRun, ownParentRun: facts.parentRun, step: null };
  } catch {
    return { ownRun: null, ownParentRun: null, step: null };
  }
}

/** normalizeSpan with the dialects ingest uses, its strings storable (storable-facts.ts). */
export function normalizeFacts(span: SpanRecord, logs: readonly LogRecord[], onError?: DialectErrorHandler): SpanFacts {
  return storableFacts(normalizeSpan(span, logs, DIALECTS, onError));
}

/**
 * Told of a request's message written for the first time (not a resent one met before), with
 * its stored form.
 */
export type NewMessage = (message: JsonValue, stored: StoredMessage) => void;

/**
 * The stored step when its request and response both stay inline (nearly every step):
 * digests and fingerprint, with no payload store involved, so it runs on a
 * worker thread too (derive-worker.ts). undefined: a value is over the threshold, and
 * offloadedStep has to store it.
 */
export function inlineStep(
  span: SpanRecord,
  draft: StepDraft,
  thresholdBytes: number,
  onNewMessage?: NewMessage,
): StoredStep | undefined {
  if (draft.kind === 'llm') {
    const request = inlineMessages(draft.request, thresholdBytes, onNewMessage);
    const response = request && inlineAnswers(draft.response, thresholdBytes);
    if (request && response) {
      const step = storedStep(
        span,
        draft,
        requestDigestOf(draft, request.digest),
        responseDigestOf(draft.response, response.digest),
      );
      if (request.messages) step.requestMessages = request.messages;
      else step.requestJson = request.json;
      if (response.messages) step.responseMessages = response.messages;
      else step.responseJson = response.json;
      if (response.finishReasons) step.responseFinishReasons = response.finishReasons;
      return step;
    }
    if (request === undefined || response === undefined) return undefined;
  }
  const request = inlineJson(draft.request, thresholdBytes);
  const response = request === undefined ? undefined : inlineJson(draft.response, thresholdBytes);
  if (request === undefined || response === undefined) return undefined;
  const requestDigest = requestDigestOf(draft, request === null ? null : sha256Hex(request));
  const responseDigest = responseDigestOf(draft.response, response === null ? null : sha256Hex(response));
  return storedStep(span, draft, requestDigest, responseDigest, request, response);
}

/** The stored step with its large values moved to the payload store (references in their place). */
export async function offloadedStep(
  span: SpanRecord,
  draft: StepDraft,
  payloads: PayloadStore,
  thresholdBytes: number,
): Promise<StoredStep> {
  const stored = await offloadLargeValues(draft, payloads, thresholdBytes);
  const step = storedStep(span, stored.draft, requestDigestOf(draft, stored.requestDigest), stored.responseDigest);
  // Recall finds the offloaded values' words too: from the draft before offloading.
  step.words = ownWordsOf({ ...step, draft });
  return step;
}

function storedStep(
  span: SpanRecord,
  d: StepDraft,
  requestDigest: string | null,
  responseDigest: string | null,
  requestJson?: Uint8Array | null,
  responseJson?: Uint8Array | null,
): StoredStep {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    draft: d,
    requestDigest,
    responseDigest,
    fingerprint: fingerprintOf(d.kind, fingerprintName(d), requestDigest),
    normalizerVersion: NORMALIZER_VERSION,
    requestJson,
    responseJson,
  };
}

/**
 * A model step's value that stays inline, as the message store keeps it: a list of messages
 * (objects, none shaped like a payload reference) message by message, each its canonical JSON
 * and that JSON's SHA-256, and the digest of the list's canonical JSON (the messages joined
 * with commas in brackets), hashed from the pieces. Any other value as its canonical JSON.
 * The threshold applies to each message, not to the list: a long conversation's list passes
 * it, and offloaded whole it would store its history once more with every call.
 * undefined: over the threshold (offloadedStep stores it); null: not recorded.
 */
function inlineMessages(
  value: JsonValue | null,
  thresholdBytes: number,
  onNewMessage?: NewMessage,
): { digest: string | null; messages?: StoredMessage[]; json: Uint8Array | null } | undefined {
  if (!isMessageList(value)) {
    const json = inlineJson(value, thresholdBytes);
    return json === undefined ? undefined : { digest: json === null ? null : sha256Hex(json), json };
  }
  // A resent history's list continues a list hashed before: only the messages after it are written.
  const prefix = hashedPrefixOf(value);
  const from = prefix ? prefix.list.length : 0;
  const rest = from === 0 ? value : value.slice(from);
  // One walk writes the rest; a message met before (the same object) is copied in whole.
  const { bytes, bounds } = canonicalListBytes(rest, (m) => storedForms.get(m as object)?.body);
  const messages: StoredMessage[] = prefix ? [...prefix.messages] : [];
  for (let i = 0; i < bounds.length; i += 2) {
    const message = rest[i >> 1];
    const known = storedForms.get(message);
    if (known) {
      messages.push(known);
      continue;
    }
    if (bounds[i + 1] - bounds[i] > thresholdBytes) return undefined;
    // a copy: a view would keep the whole list's buffer for as long as the message is known
    const body = new Uint8Array(bytes.subarray(bounds[i], bounds[i + 1]));
    const stored: StoredMessage = { digest: sha256Bytes(body), body };
    storedForms.set(message, stored);
    messages.push(stored);
    onNewMessage?.(message, stored);
  }
  // A short list is hashed at once: keeping a hash's state costs more than hashing it again.
  if (!prefix && bytes.length < KEPT_LIST_MIN_BYTES) return { digest: sha256Hex(bytes), messages, json: null };
  // The list's canonical JSON is `[`, the messages joined with commas, `]`: hashed on from
  // where the list it continues ended, and kept again up to its own last message.
  const hash = prefix ? prefix.state.copy() : createHash('sha256');
  if (prefix && rest.length > 0) hash.update(',');
  hash.update(bytes.subarray(prefix ? 1 : 0, bytes.length - 1));
  hashedPrefixes.set(value[value.length - 1], { list: value, messages, state: hash.copy() });
  return { digest: hash.update(']').digest('hex'), messages, json: null };
}

/**
 * A model step's response as inlineMessages keeps a list, but each answer that carries a
 * finish_reason stored as its turn (tapes/answer-turns.ts): the message the next call resends
 * as history, so the store holds it once. The list's digest is still that of the answers as
 * recorded, reasons and all. An answer list is not continued by a later call's list: it is
 * written and hashed whole.
 */
function inlineAnswers(
  value: JsonValue | null,
  thresholdBytes: number,
): (ReturnType<typeof inlineMessages> & { finishReasons?: (string | null)[] }) | undefined {
  if (!isMessageList(value)) return inlineMessages(value, thresholdBytes);
  const { bytes, bounds } = canonicalListBytes(value);
  const messages: StoredMessage[] = [];
  const reasons: (string | null)[] = [];
  for (let i = 0; i < bounds.length; i += 2) {
    if (bounds[i + 1] - bounds[i] > thresholdBytes) return undefined;
    const answer = bytes.subarray(bounds[i], bounds[i + 1]);
    const reason = answerReason(value[i >> 1]);
    const turn = reason === undefined ? undefined : turnOf(answer, reason);
    // either way a copy: a view would keep the whole list's buffer
    const body = turn ?? new Uint8Array(answer);
    messages.push({ digest: sha256Bytes(body), body });
    reasons.push(turn ? (reason as string) : null);
  }
  const finishReasons = reasons.some((r) => r !== null) ? reasons : undefined;
  return { digest: sha256Hex(bytes), messages, json: null, finishReasons };
}

/**
 * A message list's SHA-256 state after its last message (before the closing bracket), by
 * that message: a call that resends the history reads its messages as the very objects the
 * call before read (normalize/genai-parts.ts RecentInputs), so its list continues that call's
 * list, and is hashed from there rather than from its first message again. Kept as long as
 * the message is.
 */
const hashedPrefixes = new WeakMap<object, HashedList>();

interface HashedList {
  list: readonly object[];
  /** the list's messages in their stored form */
  messages: readonly StoredMessage[];
  state: Hash;
}

/** Bytes of canonical JSON from which a list's hash state is kept for the lists continuing it. */
const KEPT_LIST_MIN_BYTES = 16 * 1024;

/** New messages a call adds, at most, for its list to be found continuing one hashed before. */
const NEW_MESSAGES_LOOKED_PAST = 16;

/** The longest list hashed before that `list` continues (the same objects at its start), if any. */
function hashedPrefixOf(list: readonly object[]): HashedList | undefined {
  for (let j = list.length - 1; j >= Math.max(0, list.length - 1 - NEW_MESSAGES_LOOKED_PAST); j--) {
    const entry = hashedPrefixes.get(list[j]);
    if (!entry || entry.list.length !== j + 1) continue;
    let same = true;
    for (let i = 0; i < j && same; i++) same = entry.list[i] === list[i];
    if (same) return entry;
  }
  return undefined;
}

/**
 * Each message's stored form (canonical JSON and its SHA-256), by the message object: the
 * messages of a call that resends an earlier call's history are that call's very objects
 * (normalize/genai-parts.ts RecentInputs), so they are not written and hashed again.
 */
const storedForms = new WeakMap<object, StoredMessage>();

/** A non-empty list of messages (objects), none of them a payload reference. */
function isMessageList(value: JsonValue | null): value is { [key: string]: JsonValue }[] {
  return Array.isArray(value) && value.length > 0 && value.every(isInlineMessage);
}

// A module function: an arrow written in the call is a new closure each call
// (docs/architecture.md, "Decisions and why").
const isInlineMessage = (m: JsonValue): boolean =>
  typeof m === 'object' && m !== null && !Array.isArray(m) && !Object.hasOwn(m, '$payload');

/**
 * offloadLargeValues canonicalises request and response to measure them, and leaves a value
 * at or under the threshold inline with the digest of its canonical JSON (payloads/offload.ts,
 * "The rules"). That is nearly every step: inlineStep canonicalises such values once, as
 * UTF-8 bytes, which it hashes and the step writer stores as they are (steps.request and
 * response are text), where otherwise offloading would serialise them and the writer again.
 *
 * The canonical JSON of a value that stays inline; undefined when it is over the threshold,
 * or would read as a payload reference (offloading stores it whole).
 */
function inlineJson(value: JsonValue | null, thresholdBytes: number): Uint8Array | null | undefined {
  if (value === null) return null;
  if (mistakableForReference(value)) return undefined;
  const bytes = canonicalJsonBytes(value);
  return bytes.length <= thresholdBytes ? bytes : undefined;
}
