/**
 * @module tapes/step-rows
 * Finished steps ⇄ rows of tapedeck_store.steps.
 */
import type { StepDraft } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import type { Column } from '../store/bulk-insert.js';
import { Int8Slots } from '../store/copy-binary.js';
import { hexToBytes } from './span-rows.js';
import { stepOwnWords } from '../recall/recorded-text.js';
import { wordIds } from '../recall/word-hash.js';

/** A step as the writer stores it: the draft in stored (offloaded) form plus its identities. */
export interface StoredStep {
  traceId: string;
  spanId: string;
  draft: StepDraft;
  requestDigest: string | null;
  responseDigest: string | null;
  fingerprint: string;
  normalizerVersion: number;
  /** draft.request / draft.response as canonical JSON (UTF-8), when derive has it already (the text stored) */
  requestJson?: Uint8Array | null;
  responseJson?: Uint8Array | null;
  /**
   * A model step's message list, message by message, when it goes to the message store
   * (message-rows.ts); the step then holds their ids, and requestJson / responseJson are not
   * used.
   */
  requestMessages?: readonly StoredMessage[] | null;
  responseMessages?: readonly StoredMessage[] | null;
  /**
   * Per message of responseMessages, the finish_reason taken out of it (answer-turns.ts), or
   * null where the message is stored whole; absent when none was taken out.
   */
  responseFinishReasons?: readonly (string | null)[] | null;
  /**
   * Recall's words of the step's own text (recall/recorded-text.ts stepOwnWords), when they
   * must come from values the draft no longer holds (offloaded); else found from the draft.
   */
  words?: Int32Array;
}

/** A message as the message store keeps it: the SHA-256 of its canonical JSON, and that JSON (UTF-8). */
export interface StoredMessage {
  digest: Uint8Array;
  body: Uint8Array;
  /**
   * Recall's words of the message, read while its transaction writes the spans (from its value
   * as it is derived on the ingest thread, else from this JSON: message-rows.ts readValueWords,
   * readWordsAhead) and dropped once it is stored; absent: read when written.
   */
  words?: Int32Array;
}

function textOf(value: unknown): unknown {
  return value instanceof Uint8Array
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
    : value;
}

/**
 * A message list as a query parameter: its ids as an array literal. A list on its way into
 * a COPY (Int8Slots) has no ids yet and is never a parameter.
 */
function idsLiteral(value: unknown): string {
  if (!Array.isArray(value)) throw new Error('a message list as a parameter needs its ids');
  return `{${value.join(',')}}`;
}

/** A text[] as a query parameter: its array literal, each element quoted (or NULL). */
function textArrayLiteral(value: unknown): string {
  const quoted = (value as (string | null)[]).map((v) =>
    v === null ? 'NULL' : `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`,
  );
  return `{${quoted.join(',')}}`;
}

export const stepColumns: readonly Column[] = [
  { name: 'tenant' },
  { name: 'trace_id', cast: 'bytea' },
  { name: 'span_id', cast: 'bytea' },
  { name: 'kind' },
  { name: 'name' },
  { name: 'model' },
  { name: 'tool' },
  { name: 'tool_call_id' },
  { name: 'status' },
  // text, not jsonb: the canonical JSON text as it is (0009_steps_request_as_text.sql); COPY
  // takes derive's UTF-8 bytes as they are, a query parameter their text
  { name: 'request', param: textOf },
  { name: 'response', param: textOf },
  { name: 'request_digest' },
  { name: 'response_digest' },
  { name: 'fingerprint' },
  { name: 'tokens_input', cast: 'bigint' },
  { name: 'tokens_output', cast: 'bigint' },
  { name: 'tokens_cache_read', cast: 'bigint' },
  { name: 'tokens_cache_write', cast: 'bigint' },
  { name: 'tokens_context', cast: 'bigint' },
  { name: 'params', cast: 'jsonb' },
  { name: 'layout' },
  { name: 'cost_usd', cast: 'double precision' },
  { name: 'normalizer_version', cast: 'integer' },
  // the ids of the list's messages in the message store (0022_message_ids.sql)
  { name: 'request_messages', cast: 'bigint[]', copy: 'int8[]', param: idsLiteral },
  { name: 'response_messages', cast: 'bigint[]', copy: 'int8[]', param: idsLiteral },
  // recall's words of the step's own text (0021_recall_by_message.sql), hash lanes
  { name: 'words', cast: 'bigint[]', copy: 'int8[]', param: (v) => wordIds(v as Int32Array) },
  { name: 'response_finish_reasons', cast: 'text[]', copy: 'text[]', param: textArrayLiteral },
];

/** Re-deriving a step (late log records, a normalizer fix) replaces it. */
export const stepUpsertTail = `ON CONFLICT (tenant, trace_id, span_id) DO UPDATE SET
  ${stepColumns
    .slice(3)
    .map((c) => `${c.name} = EXCLUDED.${c.name}`)
    .join(', ')}`;

const json = (v: JsonValue | null): string | null => (v === null ? null : JSON.stringify(v));
const int = (v: number | null): string | null => (v === null ? null : String(Math.trunc(v)));

/**
 * The message store's ids of messages, by digest (lower-case hex): what insertMessages
 * (message-rows.ts) resolves with.
 */
export type MessageIds = ReadonlyMap<string, string>;

/** A digest as the key of MessageIds. */
export function digestKey(digest: Uint8Array): string {
  return Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex');
}

/**
 * A step's row. Its message lists are their ids when `ids` is given (a multi-row INSERT, after
 * the messages are stored); else Int8Slots, one per message in list order, request first, for
 * a COPY whose data gets the ids once they are known (derive-chunk.ts).
 */
export function stepToRow(tenant: string, s: StoredStep, ids?: MessageIds): unknown[] {
  const d = s.draft;
  const list = (messages: readonly StoredMessage[] | null | undefined) =>
    !messages ? null : ids ? messages.map((m) => idOf(ids, m)) : new Int8Slots(messages.length);
  return [
    tenant,
    hexToBytes(s.traceId),
    hexToBytes(s.spanId),
    d.kind,
    d.name,
    d.model,
    d.tool,
    d.toolCallId ?? null,
    d.status,
    s.requestMessages ? null : s.requestJson !== undefined ? s.requestJson : json(d.request),
    s.responseMessages ? null : s.responseJson !== undefined ? s.responseJson : json(d.response),
    s.requestDigest,
    s.responseDigest,
    s.fingerprint,
    int(d.tokens.input),
    int(d.tokens.output),
    int(d.tokens.cache_read),
    int(d.tokens.cache_write),
    int(d.tokens.context),
    JSON.stringify(d.params),
    d.layout,
    d.costUsd,
    s.normalizerVersion,
    list(s.requestMessages),
    list(s.responseMessages),
    s.words ?? ownWordsOf(s),
    s.responseMessages ? (s.responseFinishReasons ?? null) : null,
  ];
}

/** A stored message's id. */
export function idOf(ids: MessageIds, m: StoredMessage): string {
  const id = ids.get(digestKey(m.digest));
  if (id === undefined) throw new Error(`message ${digestKey(m.digest)} is not in the message store`);
  return id;
}

/** The step's own words from its draft: its lists in the message store are the messages' words. */
export function ownWordsOf(s: StoredStep): Int32Array {
  return stepOwnWords(s.draft, { request: !!s.requestMessages, response: !!s.responseMessages });
}
