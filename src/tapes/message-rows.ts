/**
 * @module tapes/message-rows
 * The message store (tapedeck_store.messages, 0020_message_store.sql): each distinct message
 * of a tenant's model steps once, keyed by the SHA-256 of its canonical JSON, with a compact
 * id (0022_message_ids.sql). A conversation resends its history on every call; its steps hold
 * the ids, 8 bytes a message, so what it stores grows with what it says, not with the square
 * of its length at the size of a message.
 */
import { PREPARED, type Queryable } from '../store/database.js';
import { digestKey, type StoredMessage, type StoredStep } from './step-rows.js';
import { messageValueWords, messageWords } from '../recall/recorded-text.js';
import type { JsonValue } from '../json/json-value.js';
import { int8ArrayBytes } from '../store/copy-binary.js';
import { WordTable } from '../recall/word-hash.js';

/** The messages of these steps, each once. */
export function messagesOf(steps: Iterable<StoredStep>): StoredMessage[] {
  const out = new Map<string, StoredMessage>();
  for (const s of steps)
    for (const list of [s.requestMessages, s.responseMessages])
      for (const m of list ?? []) out.set(digestKey(m.digest), m);
  return [...out.values()];
}

/**
 * Writes the messages the store does not hold yet, each with recall's words (recorded-text.ts
 * messageWords); resolves with the id of every message given, by digest (hex), for the steps
 * that name them. A message stored before costs a look-up, not its words again: the store is
 * asked first which it holds with their words, and their ids. One held without (stored before
 * migration 0021) gets them here. The rest are inserted; one another transaction stored in
 * the meantime is met by ON CONFLICT (which waits for that transaction) and then looked up,
 * its row left as that transaction wrote it, so every step names the one row its message
 * has. They are written in digest order, so two transactions storing some of the same
 * messages never wait on each other in a cycle.
 *
 * The new messages are written a block at a time (BLOCK_SIZE ids, BLOCK_BYTES of bodies), and
 * a block's words are split (docs/architecture.md, "Recall's index"): a word POSTED_FROM or
 * more of its messages hold is written once, as bits over the block
 * (tapedeck_store.message_postings); each message's other words go in its `words`, under the
 * GIN. The more messages a block has, the more words reach POSTED_FROM: a block is a whole
 * call's new messages where they fit, though its statements are cut at BATCH_BYTES.
 */
export async function insertMessages(
  tx: Queryable,
  tenant: string,
  messages: readonly StoredMessage[],
): Promise<Map<string, string>> {
  const distinct = distinctByDigest(messages);
  const ids = new Map<string, string>();
  if (distinct.length === 0) return ids;
  await lookUpIds(tx, tenant, distinct, ids);
  const sorted = notIn(distinct, ids);
  for (let at = 0; at < sorted.length; ) {
    const block: StoredMessage[] = [];
    let bytes = 0;
    while (
      at < sorted.length &&
      block.length < BLOCK_SIZE &&
      (block.length === 0 || bytes + sorted[at].body.length <= BLOCK_BYTES)
    ) {
      bytes += sorted[at].body.length;
      block.push(sorted[at++]);
    }
    await insertBlock(tx, tenant, block, ids);
  }
  rememberHeld(messages, distinct);
  return ids;
}

/**
 * Reads recall's words of the messages a transaction will store (each message's `words`),
 * while it writes its spans: for a large transaction, derived on the ingest thread, that
 * reading then overlaps PostgreSQL's COPY of the spans instead of following it. `read`: the
 * words read so far in this transaction, by digest (one message derived from many spans is
 * read once). A message a transaction stored or found held before is passed over, the very
 * object (a resent history's) or one of a recent digest: it is likely held, and
 * insertMessages reads the words of one that is not.
 */
export function readWordsAhead(messages: readonly StoredMessage[], read: Map<string, Int32Array>): void {
  for (const m of messages) {
    if (m.words || likelyHeld(m)) continue;
    const key = digestKey(m.digest);
    let words = read.get(key);
    if (!words) {
      words = wordsOf(m.body);
      read.set(key, words);
    }
    m.words = words;
  }
}

/**
 * Reads a new message's words from its value (recorded-text.ts messageValueWords), as the
 * deriver writes its stored form, unless it is likely held (as readWordsAhead).
 */
export function readValueWords(message: JsonValue, m: StoredMessage): void {
  if (m.words || likelyHeld(m)) return;
  m.words = messageValueWords(message);
}

/** Whether a message is likely held: an object a transaction stored or found held, or a recent digest. */
function likelyHeld(m: StoredMessage): boolean {
  return storedBefore.has(m) || recentlyHeld.has(heldKey(m.digest));
}

/**
 * Takes a transaction's messages for held from now on (`distinct`: one per digest), and drops
 * their words read ahead: the deriver may still hold a message (a resent history's, say).
 */
function rememberHeld(messages: readonly StoredMessage[], distinct: readonly StoredMessage[]): void {
  for (const m of messages) {
    m.words = undefined;
    storedBefore.add(m);
  }
  for (const m of distinct) {
    const key = heldKey(m.digest);
    recentlyHeld.delete(key);
    recentlyHeld.add(key);
  }
  for (const key of recentlyHeld) {
    if (recentlyHeld.size <= RECENTLY_HELD) return;
    recentlyHeld.delete(key);
  }
}

/** The message objects transactions have found stored or stored (a hint, like recentlyHeld). */
const storedBefore = new WeakSet<StoredMessage>();

/**
 * The messages recent transactions found stored or stored, whichever the tenant, by their
 * digest's first 48 bits (a hint: a message taken for held has its words read when it is
 * written), at most RECENTLY_HELD, the least recently seen dropped first.
 */
const recentlyHeld = new Set<number>();
const RECENTLY_HELD = 16_384;

const heldKey = (digest: Uint8Array): number =>
  ((digest[0] << 8) | digest[1]) * 2 ** 32 +
  (((digest[2] << 24) | (digest[3] << 16) | (digest[4] << 8) | digest[5]) >>> 0);

/** Messages per block: a block's messages have ids block * BLOCK_SIZE + position. */
export const BLOCK_SIZE = 4096;

/** Bodies per block at most: the words of a block's messages are held until it is written. */
const BLOCK_BYTES = 32 * 1024 * 1024;

/** Bodies per statement: a long conversation's messages go in a few statements, not one huge one. */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * A word held by this many of a block's new messages is posted, not in their `words`. 32
 * halved 64 KB prompts' ingest, and did not serve conversations of small messages reliably
 * better (docs/benchmarks.md, "Conversations, tape read, replay, replicas").
 */
export const POSTED_FROM = 8;

/** Inserts one block's messages, adding their ids to `ids`, then its postings. */
async function insertBlock(
  tx: Queryable,
  tenant: string,
  messages: readonly StoredMessage[],
  ids: Map<string, string>,
): Promise<void> {
  const split = splitWords(messages);
  const [{ block }] = await tx.query<{ block: string }>(NEXT_BLOCK, [], PREPARED);
  const first = BigInt(block) * BigInt(BLOCK_SIZE);
  const written = new Uint8Array(messages.length);
  const reworded: number[] = [];
  for (let at = 0; at < messages.length; ) {
    const from = at;
    let bytes = 0;
    while (at < messages.length && (at === from || bytes + messages[at].body.length <= BATCH_BYTES))
      bytes += messages[at++].body.length;
    const rows = await insertBatch(tx, tenant, messages, from, at, bytes, split, first);
    const position = new Map<string, number>();
    for (let i = from; i < at; i++) position.set(digestKey(messages[i].digest), i);
    for (const r of rows) {
      ids.set(r.digest, r.id);
      const i = position.get(r.digest) ?? -1;
      if (BigInt(r.id) === first + BigInt(i)) written[i] = 1;
      else if (i >= 0) reworded.push(i);
    }
    // stored by a transaction that has committed since (ON CONFLICT waited for it): now seen
    const met = notIn(messages.slice(from, at), ids);
    if (met.length > 0) await lookUpIds(tx, tenant, met, ids);
  }
  await postWords(tx, tenant, block, split, written);
  // A row stored before recall indexed messages keeps its id, outside this block: every word
  // goes in its `words`.
  for (const i of reworded)
    await tx.query(
      'UPDATE tapedeck_store.messages SET words = $3::bigint[] WHERE tenant = $1 AND id = $2',
      [tenant, ids.get(digestKey(messages[i].digest)), int8ArrayBytes([split.wordsOf(i, true)])],
      PREPARED,
    );
}

/**
 * Inserts messages[from, to) (`bytes` of bodies) with the ids of their positions in the block
 * that starts at id `first`; returns the rows written.
 */
async function insertBatch(
  tx: Queryable,
  tenant: string,
  messages: readonly StoredMessage[],
  from: number,
  to: number,
  bytes: number,
  split: BlockWords,
  first: bigint,
): Promise<{ digest: string; id: string }[]> {
  // The batch goes as binary parameters, cut apart in SQL: every digest one after the
  // other, every body, and every message's words (their 64-bit hashes) as one int8[] that
  // each row takes a slice of; no per-message string, text literal or escaping for
  // PostgreSQL to parse. A conflict writes the row again only where it has no words: one
  // with words is left as it is (a new version would index every word of it again) and
  // is not returned.
  const digests = Buffer.allocUnsafe((to - from) * 32);
  const bodies = Buffer.allocUnsafe(bytes);
  const lengths: number[] = [];
  const wordCounts: number[] = [];
  const kept: Int32Array[] = [];
  let end = 0;
  for (let i = from; i < to; i++) {
    const m = messages[i];
    digests.set(m.digest, (i - from) * 32);
    bodies.set(m.body, end);
    end += m.body.length;
    lengths.push(m.body.length);
    kept.push(split.wordsOf(i));
    wordCounts.push(kept[kept.length - 1].length >> 1);
  }
  return tx.query<{ digest: string; id: string }>(
    `INSERT INTO tapedeck_store.messages AS m (tenant, digest, body, words, id)
     SELECT $1, substring($2::bytea FROM (u.n - 1)::int * 32 + 1 FOR 32),
            convert_from(substring($3::bytea FROM u.start::int + 1 FOR u.length), 'UTF8'),
            ($5::bigint[])[u.word::int + 1 : (u.word + u.words)::int],
            $7::bigint + u.n - 1
       FROM (SELECT l.length, l.words, l.n, sum(l.length) OVER w - l.length AS start,
                    sum(l.words) OVER w - l.words AS word
               FROM unnest($4::int[], $6::int[]) WITH ORDINALITY AS l(length, words, n)
             WINDOW w AS (ORDER BY l.n)) u
      ORDER BY u.n
     ON CONFLICT (tenant, digest) DO UPDATE SET words = EXCLUDED.words WHERE m.words IS NULL
     RETURNING encode(digest, 'hex') AS digest, id::text AS id`,
    [
      tenant,
      digests,
      bodies,
      `{${lengths.join(',')}}`,
      int8ArrayBytes(kept),
      `{${wordCounts.join(',')}}`,
      (first + BigInt(from)).toString(),
    ],
    PREPARED,
  );
}

const NEXT_BLOCK = `SELECT nextval('tapedeck_store.message_blocks')::text AS block`;

/**
 * A block's words, each numbered once: a message's words are held as their numbers (4 bytes
 * a word, not the 8 of its hash), and its `words` are made from them a statement at a time.
 * A word POSTED_FROM or more of the block's messages hold is posted. Exported for the recall
 * bench, which writes its store as ingest does.
 */
export class BlockWords {
  private readonly table = new WordTable();
  private held = new Uint32Array(1024);
  /** per message, the numbers of its words, in bigint order */
  private readonly numbers: Int32Array[] = [];
  private lanes: Int32Array = new Int32Array(0);
  /** per number, its index among the posted words, -1 for a word kept in `words` */
  private postedIndex = new Int32Array(0);
  /** how many words are posted */
  posted = 0;

  /** Adds the next message's words (lanes, in bigint order, each once). */
  add(own: Int32Array): void {
    const of = new Int32Array(own.length >> 1);
    for (let k = 0; k < of.length; k++) {
      const n = this.table.add(own[2 * k], own[2 * k + 1]);
      const number = n < 0 ? ~n : n;
      if (number >= this.held.length) {
        const grown = new Uint32Array(this.held.length * 2);
        grown.set(this.held);
        this.held = grown;
      }
      this.held[number]++;
      of[k] = number;
    }
    this.numbers.push(of);
  }

  /** Chooses the posted words, once every message is added. */
  finish(): this {
    const size = this.table.size;
    this.postedIndex = new Int32Array(size).fill(-1);
    for (let n = 0; n < size; n++) if (this.held[n] >= POSTED_FROM) this.postedIndex[n] = this.posted++;
    this.lanes = this.table.lanes();
    return this;
  }

  /** Message i's words (lanes, in bigint order): those it keeps in `words`, or all of them. */
  wordsOf(i: number, all = false): Int32Array {
    const of = this.numbers[i];
    const postedIndex = this.postedIndex;
    let count = 0;
    for (let k = 0; k < of.length; k++) if (all || postedIndex[of[k]] < 0) count++;
    const out = new Int32Array(count * 2);
    let at = 0;
    for (let k = 0; k < of.length; k++) {
      const n = of[k];
      if (!all && postedIndex[n] >= 0) continue;
      out[at++] = this.lanes[2 * n];
      out[at++] = this.lanes[2 * n + 1];
    }
    return out;
  }

  /**
   * The posted words' rows over the block: bit i of a word's bits set when message i, written
   * (`written[i]` 1), holds it. A row ends with its last set bit's byte; a word none of the
   * written messages holds has none.
   */
  postings(written: Uint8Array): { words: Int32Array; lengths: number[]; bits: Buffer } {
    const count = this.posted;
    const stride = (written.length + 7) >> 3;
    const bits = new Uint8Array(count * stride);
    const last = new Int32Array(count).fill(-1);
    for (let i = 0; i < written.length; i++) {
      if (written[i] === 0) continue;
      for (const n of this.numbers[i]) {
        const index = this.postedIndex[n];
        if (index < 0) continue;
        bits[index * stride + (i >> 3)] |= 1 << (i & 7);
        last[index] = i;
      }
    }
    const words = new Int32Array(count * 2);
    const lengths: number[] = [];
    const parts: Uint8Array[] = [];
    let at = 0;
    for (let n = 0; n < this.postedIndex.length; n++) {
      const index = this.postedIndex[n];
      if (index < 0 || last[index] < 0) continue;
      const length = (last[index] >> 3) + 1;
      words[at++] = this.lanes[2 * n];
      words[at++] = this.lanes[2 * n + 1];
      lengths.push(length);
      parts.push(bits.subarray(index * stride, index * stride + length));
    }
    return { words: words.subarray(0, at), lengths, bits: Buffer.concat(parts) };
  }
}

/** The block's messages' words, tokenized. */
function splitWords(messages: readonly StoredMessage[]): BlockWords {
  const split = new BlockWords();
  for (const m of messages) split.add(m.words ?? wordsOf(m.body));
  return split.finish();
}

/**
 * Writes the posted words' rows over the block, of the messages written here (`written`), in
 * word order: the key's B-tree then takes them leaf after leaf, not at random.
 */
async function postWords(
  tx: Queryable,
  tenant: string,
  block: string,
  split: BlockWords,
  written: Uint8Array,
): Promise<void> {
  if (split.posted === 0) return;
  const { words, lengths, bits } = split.postings(written);
  if (lengths.length === 0) return;
  await tx.query(
    `INSERT INTO tapedeck_store.message_postings (tenant, word, block, bits)
     SELECT $1, p.word, $2::bigint, substring($3::bytea FROM p.start::int + 1 FOR p.length)
       FROM (SELECT l.word, l.length, sum(l.length) OVER (ORDER BY l.n) - l.length AS start
               FROM unnest($4::bigint[], $5::int[]) WITH ORDINALITY AS l(word, length, n)) p
      ORDER BY p.word`,
    [tenant, block, bits, int8ArrayBytes([words]), `{${lengths.join(',')}}`],
    PREPARED,
  );
}

// Loops and module functions, not callbacks made per call (docs/architecture.md, "Decisions
// and why").

const byDigest = (a: StoredMessage, b: StoredMessage) => Buffer.compare(a.digest, b.digest);

/** The messages in digest order, each digest once. */
function distinctByDigest(messages: readonly StoredMessage[]): StoredMessage[] {
  const sorted = [...messages].sort(byDigest);
  const out: StoredMessage[] = [];
  for (const m of sorted) if (out.length === 0 || byDigest(out[out.length - 1], m) !== 0) out.push(m);
  return out;
}

/** The messages whose ids are not in `ids`. */
function notIn(messages: readonly StoredMessage[], ids: ReadonlyMap<string, string>): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (const m of messages) if (!ids.has(digestKey(m.digest))) out.push(m);
  return out;
}

/** The digests of messages[from, to), each as a Buffer (a bytea parameter). */
function digestsOf(messages: readonly StoredMessage[], from: number, to: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = from; i < Math.min(to, messages.length); i++) out.push(Buffer.from(messages[i].digest));
  return out;
}

/** Adds the ids of those of `messages` the store holds with their words to `ids`. */
async function lookUpIds(
  tx: Queryable,
  tenant: string,
  messages: readonly StoredMessage[],
  ids: Map<string, string>,
): Promise<void> {
  for (let at = 0; at < messages.length; at += LOOKUP_BATCH) {
    const rows = await tx.query<{ digest: string; id: string }>(
      STORED_MESSAGE_IDS,
      [tenant, digestsOf(messages, at, at + LOOKUP_BATCH)],
      PREPARED,
    );
    for (const r of rows) ids.set(r.digest, r.id);
  }
}

/**
 * The ids of the messages a tenant holds with their words ($1 tenant, $2 digests): one probe
 * of the key per digest, not `= ANY`, whatever the statistics say (docs/architecture.md,
 * "Message store").
 */
export const STORED_MESSAGE_IDS = `SELECT encode(m.digest, 'hex') AS digest, m.id::text AS id
    FROM unnest($2::bytea[]) AS d(digest)
   CROSS JOIN LATERAL (SELECT m.digest, m.id FROM tapedeck_store.messages m
                        WHERE m.tenant = $1 AND m.digest = d.digest AND m.words IS NOT NULL
                       OFFSET 0) m`;

/** Digests looked up per statement. */
const LOOKUP_BATCH = 10_000;

/** A message's words: their 64-bit hashes as 32-bit halves (high, low, ...), in bigint order. */
function wordsOf(body: Uint8Array): Int32Array {
  return messageWords(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
}

/**
 * Deletes the messages no step references: after a reindex, whose new reading of a span may
 * no longer hold a message an older one did. (Erasure deletes only the messages of the steps
 * it deleted: erasure/erase-rows.ts.)
 */
export async function deleteUnreferencedMessages(db: Queryable): Promise<void> {
  await db.query(deletingMessages(null));
}

/**
 * The statement that deletes those of the messages `candidates` lists (a query of tenant and
 * id; null: every message) no step references, and clears their bits from the postings (a
 * row left with none goes); it returns how many messages went. The GIN indexes on the steps'
 * message lists answer "still referenced?" without reading every step.
 */
export function deletingMessages(candidates: string | null): string {
  const c = candidates === null ? 'm' : 'c';
  return `WITH gone AS (
      DELETE FROM tapedeck_store.messages m
      ${candidates === null ? '' : `USING (${candidates}) c`}
       WHERE ${candidates === null ? '' : 'm.tenant = c.tenant AND m.id = c.id AND'}
             NOT EXISTS (SELECT 1 FROM tapedeck_store.steps st
                          WHERE st.request_messages @> ARRAY[${c}.id] AND st.tenant = ${c}.tenant)
         AND NOT EXISTS (SELECT 1 FROM tapedeck_store.steps st
                          WHERE st.response_messages @> ARRAY[${c}.id] AND st.tenant = ${c}.tenant)
      RETURNING m.tenant, m.id),
    blocks AS (
      SELECT tenant, id / ${BLOCK_SIZE} AS block, array_agg((id % ${BLOCK_SIZE})::int) AS at
        FROM gone GROUP BY tenant, id / ${BLOCK_SIZE}),
    cleared AS (
      SELECT p.tenant, p.word, p.block, tapedeck_store.without_bits(p.bits, b.at) AS bits
        FROM blocks b JOIN tapedeck_store.message_postings p ON p.tenant = b.tenant AND p.block = b.block),
    kept AS (
      UPDATE tapedeck_store.message_postings p SET bits = c.bits
        FROM cleared c
       WHERE p.tenant = c.tenant AND p.word = c.word AND p.block = c.block AND bit_count(c.bits) > 0),
    emptied AS (
      DELETE FROM tapedeck_store.message_postings p
       USING cleared c
       WHERE p.tenant = c.tenant AND p.word = c.word AND p.block = c.block AND bit_count(c.bits) = 0)
    SELECT count(*) AS n FROM gone`;
}
