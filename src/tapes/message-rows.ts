/**
 * @module tapes/message-rows
 * The message store (tapedeck_store.messages, 0020_message_store.sql): each distinct message
 * of a tenant's model steps once, keyed by the SHA-256 of its canonical JSON. A conversation
 * resends its history on every call; its steps hold digests, so what it stores grows with
 * what it says, not with the square of its length.
 */
import type { Queryable } from '../store/database.js';
import type { StoredMessage, StoredStep } from './step-rows.js';

/** The messages of these steps, each once. */
export function messagesOf(steps: Iterable<StoredStep>): StoredMessage[] {
  const out = new Map<string, StoredMessage>();
  for (const s of steps)
    for (const list of [s.requestMessages, s.responseMessages])
      for (const m of list ?? []) out.set(Buffer.from(m.digest).toString('hex'), m);
  return [...out.values()];
}

/**
 * Writes the messages the store does not hold yet; resolves with the digests (hex) of those
 * it wrote. They are written in digest order, so two transactions storing some of the same
 * messages never wait on each other in a cycle.
 */
export async function insertMessages(
  tx: Queryable,
  tenant: string,
  messages: readonly StoredMessage[],
): Promise<string[]> {
  const sorted = [...messages]
    .sort((a, b) => Buffer.compare(a.digest, b.digest))
    .filter((m, i, all) => i === 0 || Buffer.compare(all[i - 1].digest, m.digest) !== 0);
  const written: string[] = [];
  for (let at = 0; at < sorted.length; ) {
    const batch: StoredMessage[] = [];
    let bytes = 0;
    while (at < sorted.length && (batch.length === 0 || bytes + sorted[at].body.length <= BATCH_BYTES)) {
      bytes += sorted[at].body.length;
      batch.push(sorted[at++]);
    }
    // The batch goes as two binary parameters, every digest and every body each one after
    // the other, cut apart in SQL: no per-message string, array literal or escaping.
    const digests = Buffer.allocUnsafe(batch.length * 32);
    const bodies = Buffer.allocUnsafe(bytes);
    const lengths: number[] = [];
    let end = 0;
    batch.forEach((m, i) => {
      digests.set(m.digest, i * 32);
      bodies.set(m.body, end);
      end += m.body.length;
      lengths.push(m.body.length);
    });
    const rows = await tx.query<{ digest: string }>(
      `INSERT INTO tapedeck_store.messages (tenant, digest, body)
       SELECT $1, substring($2::bytea FROM (u.n - 1)::int * 32 + 1 FOR 32),
              convert_from(substring($3::bytea FROM u.start::int + 1 FOR u.length), 'UTF8')
         FROM (SELECT l.length, l.n, sum(l.length) OVER (ORDER BY l.n) - l.length AS start
                 FROM unnest($4::int[]) WITH ORDINALITY AS l(length, n)) u
        ORDER BY u.n
       ON CONFLICT DO NOTHING
       RETURNING encode(digest, 'hex') AS digest`,
      [tenant, digests, bodies, `{${lengths.join(',')}}`],
    );
    for (const r of rows) written.push(r.digest);
  }
  return written;
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
                         WHERE st.request_messages @> ARRAY[m.digest] AND st.tenant = m.tenant)
        AND NOT EXISTS (SELECT 1 FROM tapedeck_store.steps st
                         WHERE st.response_messages @> ARRAY[m.digest] AND st.tenant = m.tenant)`,
  );
}
