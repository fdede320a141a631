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
import { messageWords } from '../recall/recorded-text.js';
import { int8ArrayBytes } from '../store/copy-binary.js';

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
    const batch: StoredMessage[] = [];
    let bytes = 0;
    while (at < sorted.length && (batch.length === 0 || bytes + sorted[at].body.length <= BATCH_BYTES)) {
      bytes += sorted[at].body.length;
      batch.push(sorted[at++]);
    }
    // The batch goes as binary parameters, cut apart in SQL: every digest one after the
    // other, every body, and every message's words (their 64-bit hashes) as one int8[] that
    // each row takes a slice of; no per-message string, text literal or escaping for
    // PostgreSQL to parse. A conflict writes the row again only where it has no words: one
    // with words is left as it is (a new version would index every word of it again) and
    // is not returned.
    const digests = Buffer.allocUnsafe(batch.length * 32);
    const bodies = Buffer.allocUnsafe(bytes);
    const lengths: number[] = [];
    const wordCounts: number[] = [];
    const words: Int32Array[] = [];
    let end = 0;
    for (let i = 0; i < batch.length; i++) {
      const m = batch[i];
      digests.set(m.digest, i * 32);
      bodies.set(m.body, end);
      end += m.body.length;
      lengths.push(m.body.length);
      const own = wordsOf(m.body);
      words.push(own);
      wordCounts.push(own.length >> 1);
    }
    const rows = await tx.query<{ digest: string; id: string }>(
      `INSERT INTO tapedeck_store.messages AS m (tenant, digest, body, words)
       SELECT $1, substring($2::bytea FROM (u.n - 1)::int * 32 + 1 FOR 32),
              convert_from(substring($3::bytea FROM u.start::int + 1 FOR u.length), 'UTF8'),
              ($5::bigint[])[u.word::int + 1 : (u.word + u.words)::int]
         FROM (SELECT l.length, l.words, l.n, sum(l.length) OVER w - l.length AS start,
                      sum(l.words) OVER w - l.words AS word
                 FROM unnest($4::int[], $6::int[]) WITH ORDINALITY AS l(length, words, n)
               WINDOW w AS (ORDER BY l.n)) u
        ORDER BY u.n
       ON CONFLICT (tenant, digest) DO UPDATE SET words = EXCLUDED.words WHERE m.words IS NULL
       RETURNING encode(digest, 'hex') AS digest, id::text AS id`,
      [tenant, digests, bodies, `{${lengths.join(',')}}`, int8ArrayBytes(words), `{${wordCounts.join(',')}}`],
      PREPARED,
    );
    for (const r of rows) ids.set(r.digest, r.id);
    // stored by a transaction that has committed since (ON CONFLICT waited for it): now seen
    const met = notIn(batch, ids);
    if (met.length > 0) await lookUpIds(tx, tenant, met, ids);
  }
  return ids;
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

/** Bodies per statement: a long conversation's messages go in a few statements, not one huge one. */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Deletes the messages no step references: after a reindex, whose new reading of a span may
 * no longer hold a message an older one did. (Erasure deletes only the messages of the steps
 * it deleted: erasure/erase-rows.ts.)
 */
export async function deleteUnreferencedMessages(db: Queryable): Promise<void> {
  await db.query(
    `DELETE FROM tapedeck_store.messages m
      WHERE NOT EXISTS (SELECT 1 FROM tapedeck_store.steps st
                         WHERE st.request_messages @> ARRAY[m.id] AND st.tenant = m.tenant)
        AND NOT EXISTS (SELECT 1 FROM tapedeck_store.steps st
                         WHERE st.response_messages @> ARRAY[m.id] AND st.tenant = m.tenant)`,
  );
}
