/**
 * @module derive/derive-chunk
 * Deriving the steps of an ingest transaction chunk by chunk, without the database or the
 * payload store, so it can run on a worker thread (derive-worker.ts): normalize each span,
 * compute the stored step (digests, fingerprint; derive.ts inlineStep), and encode the steps
 * of new spans as binary COPY tuples for tapedeck_store.steps (with recall's words of their own
 * text), and their messages for the message store. A step names its messages by their ids in
 * the store, which only the store can tell: each is written as a slot (copy-binary.ts
 * Int8Slots) that the caller fills in (fillMessageIds) once the messages are stored.
 *
 * Run facts are not sent back: the caller reads them from the attributes (run-identity.ts).
 * What it leaves to its caller: spans with a value over the payload threshold (`local`: they
 * need the payload store, see derive.ts offloadedStep), and the steps of spans stored before
 * (`restated`: upserted, not copied).
 */
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import { BinaryCopyWriter, fillInt8Slots } from '../store/copy-binary.js';
import { digestKey, idOf, type MessageIds, stepColumns, stepToRow, type StoredMessage } from '../tapes/step-rows.js';
import { copyColumnsOf } from '../store/bulk-insert.js';
import { DERIVE_FAILED, inlineStep, type NewMessage, normalizeFacts } from './derive.js';
import type { DerivedSpan } from '../tapes/derived-span.js';
import type { ResentTexts } from './resent-texts.js';

export const stepCopyColumns = copyColumnsOf(stepColumns);

export interface DeriveChunkRequest {
  /** the transaction's job; its chunks arrive in order */
  job: number;
  tenant: string;
  spans: SpanRecord[];
  /** per span: not stored yet (its step is copied; else upserted by the caller) */
  isNew: boolean[];
  /** per span: its correlated log records (null: none) */
  logs: (LogRecord[] | null)[];
  /** to a worker: the long texts left out of the spans' attributes (resent-texts.ts) */
  resent?: ResentTexts;
}

export interface DeriveChunkResult {
  job: number;
  /**
   * binary COPY tuples (unframed) of the new spans' steps, for tapedeck_store.steps, in
   * pieces (the worker sends them as one: transferable)
   */
  steps: Uint8Array[];
  /** the steps of spans stored before, to upsert */
  restated: DerivedSpan[];
  /** indexes (in this chunk) of spans with a value over the payload threshold */
  local: number[];
  /** dialects that threw, or deriving that threw elsewhere (each span then has no step), for the caller to report */
  dialectErrors: { index: number; layout: string; error: Error }[];
  /**
   * the messages of the steps in `steps`, for the message store (tapes/message-rows.ts), each
   * once however many of the chunk's lists hold it (a conversation's calls resend its history)
   */
  messages: StoredMessage[];
  /** where each message of each list has its id's slot in `steps` (bytes from its start) */
  slots: Uint32Array;
  /** per slot, the index in `messages` of the message it names */
  slotMessages: Uint32Array;
  /** from a worker: `messages` packed (packMessages), moved rather than cloned */
  packedMessages?: Uint8Array;
}

/** Where placeStep puts a step: its tuple and messages, or the steps to upsert. */
export interface PlacedSteps {
  steps: BinaryCopyWriter;
  restated: DerivedSpan[];
  messages: ListedMessages;
}

/** Derives the chunks of many jobs. */
export class ChunkDeriver {
  /** onNewMessage: told of each new message of a request as it is written (derive.ts inlineStep) */
  constructor(
    private readonly thresholdBytes: number,
    private readonly onNewMessage?: NewMessage,
  ) {}

  derive(req: DeriveChunkRequest): DeriveChunkResult {
    const out = {
      steps: new BinaryCopyWriter(stepCopyColumns, { framed: false }),
      restated: [] as DerivedSpan[],
      messages: new ListedMessages(),
    };
    const local: number[] = [];
    const dialectErrors: DeriveChunkResult['dialectErrors'] = [];
    // a loop, not a callback made per chunk (docs/architecture.md, "Decisions and why")
    for (let index = 0; index < req.spans.length; index++) this.place(req, index, out, local, dialectErrors);
    return {
      job: req.job,
      steps: out.steps.take(),
      restated: out.restated,
      local,
      dialectErrors,
      messages: out.messages.messages,
      slots: Uint32Array.from(out.steps.slotOffsets()),
      slotMessages: out.messages.slotMessages(),
    };
  }

  /** Derives the chunk's span at `index` and places its step in `out`, or lists it as local or failed. */
  private place(
    req: DeriveChunkRequest,
    index: number,
    out: PlacedSteps,
    local: number[],
    dialectErrors: DeriveChunkResult['dialectErrors'],
  ): void {
    const span = req.spans[index];
    let derived: DerivedSpan | undefined;
    try {
      const f = normalizeFacts(span, req.logs[index] ?? [], (error, layout) =>
        dialectErrors.push({ index, layout, error: asError(error) }),
      );
      if (!f.step) return;
      const step = inlineStep(span, f.step, this.thresholdBytes, this.onNewMessage);
      if (!step) return void local.push(index);
      derived = { ownRun: f.ownRun, ownParentRun: f.parentRun, step };
    } catch (error) {
      // stored with no step; its run facts are read from its attributes by the caller
      return void dialectErrors.push({ index, layout: DERIVE_FAILED, error: asError(error) });
    }
    // outside the try: a tuple is written whole or not at all
    placeStep(req.tenant, derived, req.isNew[index], out);
  }
}

/**
 * The messages of a chunk's lists, each once (by digest), and for each list entry, in the
 * order the lists are written, which of them it is: a run of n calls resending its history
 * names about n²/2 messages and holds n, so only those are copied, sent and stored.
 */
export class ListedMessages {
  readonly messages: StoredMessage[] = [];
  private readonly indexes: number[] = [];
  private readonly byDigest = new Map<string, number>();

  add(list: readonly StoredMessage[]): void {
    for (const m of list) {
      const key = digestKey(m.digest);
      let index = this.byDigest.get(key);
      if (index === undefined) {
        index = this.messages.length;
        this.messages.push(m);
        this.byDigest.set(key, index);
      }
      this.indexes.push(index);
    }
  }

  slotMessages(): Uint32Array {
    return Uint32Array.from(this.indexes);
  }
}

/**
 * Where a derived span's step goes: a new span's step into the COPY tuples (its messages into
 * `messages`, in the order of their slots); a stored span's step to be upserted.
 */
export function placeStep(tenant: string, d: DerivedSpan, isNew: boolean, out: PlacedSteps): void {
  if (!d.step) return;
  if (!isNew) {
    out.restated.push(d);
    return;
  }
  out.steps.row(stepToRow(tenant, d.step));
  for (const list of [d.step.requestMessages, d.step.responseMessages]) if (list) out.messages.add(list);
}

/**
 * Writes the ids of the messages into their slots in the encoded steps (pieces: all of one
 * writer's data; slotMessages: per slot, its message's index in `messages`); every message
 * must have its id in `ids`.
 */
export function fillMessageIds(
  pieces: readonly Uint8Array[],
  slots: Uint32Array,
  slotMessages: Uint32Array,
  messages: readonly StoredMessage[],
  ids: MessageIds,
): void {
  if (slots.length !== slotMessages.length) throw new Error('every message of a step list has one slot');
  const idOfMessage: bigint[] = [];
  for (const m of messages) idOfMessage.push(BigInt(idOf(ids, m)));
  fillInt8Slots(pieces, slots, idOfMessage, slotMessages);
}

/**
 * The chunks as one Uint8Array over an ArrayBuffer of its own, so it can be transferred to
 * another thread without copying (a Buffer may share its ArrayBuffer with others).
 */
export function own(chunks: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const c of chunks) size += c.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * The derived span with its step's canonical bytes over buffers of their own: they may be a
 * slice of Node's shared 8 KiB pool (json/canonical.ts), which a structured clone to another
 * thread would send whole.
 */
export function withOwnBytes(d: DerivedSpan): DerivedSpan {
  const step = d.step;
  if (!step) return d;
  const copy = (b: Uint8Array | null | undefined) => (b ? new Uint8Array(b) : b);
  return {
    ...d,
    step: {
      ...step,
      requestJson: copy(step.requestJson),
      responseJson: copy(step.responseJson),
      requestMessages: step.requestMessages && ownMessages(step.requestMessages),
      responseMessages: step.responseMessages && ownMessages(step.responseMessages),
    },
  };
}

/** Messages over buffers of their own (withOwnBytes). */
export function ownMessages(messages: readonly StoredMessage[]): StoredMessage[] {
  return messages.map((m) => ({ digest: new Uint8Array(m.digest), body: new Uint8Array(m.body) }));
}

/**
 * A chunk's messages in one buffer of its own, to be moved to another thread rather than
 * cloned message by message (an ArrayBuffer each): per message its 32-byte digest, the
 * body's length (uint32, big-endian) and the body.
 */
export function packMessages(messages: readonly StoredMessage[]): Uint8Array {
  let size = 0;
  for (const m of messages) size += 36 + m.body.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const m of messages) {
    out.set(m.digest, at);
    view.setUint32(at + 32, m.body.length);
    out.set(m.body, at + 36);
    at += 36 + m.body.length;
  }
  return out;
}

/** The messages packMessages packed, as views of its buffer. */
export function unpackMessages(packed: Uint8Array): StoredMessage[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const out: StoredMessage[] = [];
  for (let at = 0; at < packed.length; ) {
    const length = view.getUint32(at + 32);
    out.push({ digest: packed.subarray(at, at + 32), body: packed.subarray(at + 36, at + 36 + length) });
    at += 36 + length;
  }
  return out;
}

/** What a dialect threw, as an Error: a structured clone takes an Error, not any value. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
