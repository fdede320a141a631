/**
 * The message store's writer (src/tapes/message-rows.ts insertMessages), on PGlite and
 * PostgreSQL: every new message is stored with recall's words of its own text (ascending, so
 * that PostgreSQL's sort for the GIN entries finds them sorted), whatever the messages around
 * it in the statement (one with no words among them, several statements for one call), a word
 * enough of a statement's messages hold as one row of bits over its block, the others in each
 * message's words, and a deleted message's bits cleared; a
 * message stored before keeps its row and id; a message of a few KB is kept whole in its row
 * (body and words, none of it in the TOAST table), a long one read back exactly; messages
 * are looked up by their key even when the statistics say the tenant holds only a few. Words
 * read ahead (while a transaction writes its spans) are the ones stored, and dropped once
 * stored; a message a recent transaction stored is passed over then, and still stored with
 * its words when it turns out not to be held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Bytes } from '../../src/json/canonical.js';
import { messageWords } from '../../src/recall/recorded-text.js';
import { wordId, wordIds, wordHash } from '../../src/recall/word-hash.js';
import {
  BLOCK_SIZE,
  deletingMessages,
  insertMessages,
  POSTED_FROM,
  readWordsAhead,
  STORED_MESSAGE_IDS,
} from '../../src/tapes/message-rows.js';
import { digestKey, type StoredMessage } from '../../src/tapes/step-rows.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { prng } from '../helpers/prng.js';
import { scanConditions, withLaggingStatistics } from '../helpers/query-plans.js';

function message(json: unknown): StoredMessage {
  const body = Buffer.from(JSON.stringify(json));
  return { digest: sha256Bytes(body), body };
}

/** The words a message should be stored with, ascending, as PostgreSQL prints a bigint[]. */
const expectedWords = (m: StoredMessage) =>
  `{${wordIds(messageWords(m.body.toString()))
    .map(BigInt)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .join(',')}}`;

describe.each(databaseKinds)('insertMessages on %s', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await t?.drop();
  });

  /** Each message's row, its words those in `words` and those posted for it, ascending. */
  const stored = async (tenant: string) =>
    new Map(
      (
        await t.db.query<{ digest: string; id: string; words: string | null; kept: string | null }>(
          `SELECT encode(m.digest, 'hex') AS digest, m.id::text AS id, m.words::text AS kept,
                  CASE WHEN m.words IS NOT NULL THEN (
                    SELECT coalesce(array_agg(x.w ORDER BY x.w), '{}')
                      FROM (SELECT unnest(m.words) AS w
                            UNION ALL
                            SELECT p.word FROM tapedeck_store.message_postings p
                             WHERE p.tenant = m.tenant AND p.block = m.id / ${BLOCK_SIZE}
                               AND CASE WHEN m.id % ${BLOCK_SIZE} < length(p.bits) * 8
                                        THEN get_bit(p.bits, (m.id % ${BLOCK_SIZE})::int) = 1 END) x)::text
                  END AS words
             FROM tapedeck_store.messages m WHERE m.tenant = $1`,
          [tenant],
        )
      ).map((r) => [r.digest, r]),
    );

  /** The posting rows of a tenant's word: block and the positions of its set bits. */
  const postings = async (tenant: string, word: string) =>
    (
      await t.db.query<{ block: string; bits: Buffer }>(
        `SELECT block::text AS block, bits FROM tapedeck_store.message_postings
          WHERE tenant = $1 AND word = $2 ORDER BY block`,
        [tenant, wordId(...wordHash(word))],
      )
    ).map((r) => ({
      block: BigInt(r.block),
      at: Array.from({ length: r.bits.length * 8 }, (_, i) => i).filter((i) => (r.bits[i >> 3] >> (i & 7)) & 1),
    }));

  it("stores each message with its own words, in order, one with none among them ('{}', not NULL)", async () => {
    const messages = [
      message({ role: 'system', content: 'You route trains; answer in one sentence.' }),
      message({ role: 'assistant', content: '', tool_calls: [] }),
      message({ role: 'user', content: [{ type: 'text', text: 'Which platform for Lyon, 10:05? Über Dijon.' }] }),
      message({ role: 'assistant', content: '42 -7 9223372036854775807 tokens', tool_calls: [{ name: 'lookup' }] }),
    ];
    const ids = await t.db.transaction((tx) => insertMessages(tx, 'words', messages));
    const rows = await stored('words');
    expect(rows.size).toBe(messages.length);
    for (const m of messages) {
      const row = rows.get(digestKey(m.digest))!;
      expect(row.id).toBe(ids.get(digestKey(m.digest)));
      expect(row.words).toBe(expectedWords(m));
    }
    expect(rows.get(digestKey(messages[1].digest))!.words).toBe('{}');
  });

  it('cuts the words right across several statements of one call, and keeps the rows stored before', async () => {
    // bodies of about 300 KB each: the 4 MB statements take a dozen or so, the call several
    const long = (i: number) =>
      message({
        role: 'user',
        content: `${i} ${Array.from({ length: 30_000 }, (_, k) => `w${(k * 7 + i) % 4099}`).join(' ')}`,
      });
    const first = Array.from({ length: 20 }, (_, i) => long(i));
    const before = await t.db.transaction((tx) => insertMessages(tx, 'long', first.slice(0, 5)));
    const again = [...first, message({ role: 'user', content: 'short' })];
    const ids = await t.db.transaction((tx) => insertMessages(tx, 'long', again));
    const rows = await stored('long');
    expect(rows.size).toBe(again.length);
    for (const m of again) expect(rows.get(digestKey(m.digest))!.words).toBe(expectedWords(m));
    for (const [digest, id] of before) expect(ids.get(digest)).toBe(id);
    // a word every message holds is posted for the statements of a dozen or so, kept by the
    // five the first call stored
    expect((await postings('long', 'w7')).length).toBeGreaterThan(0);
    for (const m of first.slice(0, 5)) expect(rows.get(digestKey(m.digest))!.kept).toContain(wordId(...wordHash('w7')));
  });

  it("posts a word enough of a statement's new messages hold as bits over its block, and clears a deleted one's", async () => {
    const turn = (i: number, extra: string) => message({ role: 'user', content: `turn${i} common ${extra}` });
    const earlier = turn(0, 'frequent');
    await t.db.transaction((tx) => insertMessages(tx, 'bits', [earlier]));
    // `frequent` in POSTED_FROM of the new ones (and the one stored before), `sometimes` in fewer
    const batch = Array.from({ length: POSTED_FROM + 3 }, (_, i) =>
      turn(i + 1, `${i < POSTED_FROM ? 'frequent' : ''} ${i < POSTED_FROM - 1 ? 'sometimes' : ''}`),
    );
    const ids = await t.db.transaction((tx) => insertMessages(tx, 'bits', [earlier, ...batch]));
    const rows = await stored('bits');
    for (const m of [earlier, ...batch]) expect(rows.get(digestKey(m.digest))!.words).toBe(expectedWords(m));

    const idOf = (m: StoredMessage) => BigInt(ids.get(digestKey(m.digest))!);
    const block = idOf(batch[0]) / BigInt(BLOCK_SIZE);
    for (const m of batch) expect(idOf(m) / BigInt(BLOCK_SIZE)).toBe(block);
    expect(idOf(earlier) / BigInt(BLOCK_SIZE)).toBeLessThan(block);
    const at = (ms: StoredMessage[]) => ms.map((m) => Number(idOf(m) % BigInt(BLOCK_SIZE))).sort((a, b) => a - b);
    expect(await postings('bits', 'common')).toEqual([{ block, at: at(batch) }]);
    expect(await postings('bits', 'frequent')).toEqual([{ block, at: at(batch.slice(0, POSTED_FROM)) }]);
    expect(await postings('bits', 'sometimes')).toEqual([]);
    const sometimes = wordId(...wordHash('sometimes'));
    for (const m of batch.slice(0, POSTED_FROM - 1)) expect(rows.get(digestKey(m.digest))!.kept).toContain(sometimes);
    expect(rows.get(digestKey(earlier.digest))!.kept).toContain(wordId(...wordHash('frequent')));

    // no step names them: deleting three clears their bits; deleting the rest, the rows
    const gone = (ms: StoredMessage[]) =>
      t.db.transaction((tx) =>
        tx.query(deletingMessages(`SELECT 'bits'::text AS tenant, unnest($1::bigint[]) AS id`), [
          ms.map((m) => idOf(m).toString()),
        ]),
      );
    await gone(batch.slice(0, 3));
    expect(await postings('bits', 'common')).toEqual([{ block, at: at(batch.slice(3)) }]);
    expect(await postings('bits', 'frequent')).toEqual([{ block, at: at(batch.slice(3, POSTED_FROM)) }]);
    await gone(batch.slice(3, POSTED_FROM));
    expect(await postings('bits', 'frequent')).toEqual([]);
    expect(await postings('bits', 'common')).toEqual([{ block, at: at(batch.slice(POSTED_FROM)) }]);
  });

  it('keeps a message of a few KB whole in its row, and reads a long one back exactly', async () => {
    // the rows of the messages' TOAST table: each holds a piece of a value moved out of its row
    const [{ toast }] = await t.db.query<{ toast: string }>(
      `SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'tapedeck_store.messages'::regclass`,
    );
    const chunks = async () => Number((await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${toast}`))[0].n);
    // about 2 KB of text that compresses as prose does (not much): 300 words drawn from 190
    const prose = (seed: number) => {
      const next = prng(seed);
      const pool = Array.from({ length: 190 }, () => Math.floor(next() * 2 ** 31).toString(36));
      const content = Array.from({ length: 300 }, () => pool[Math.floor(next() * pool.length)]).join(' ');
      return message({ role: 'user', content });
    };
    const before = await chunks();
    const few = [prose(1), prose(2), prose(3)];
    for (const m of few) {
      expect(m.body.length).toBeGreaterThan(2048);
      expect(m.body.length + 8 * (messageWords(m.body.toString()).length >> 1)).toBeLessThan(3900);
    }
    await t.db.transaction((tx) => insertMessages(tx, 'inline', few));
    expect(await chunks()).toBe(before);

    const long = message({ role: 'user', content: Array.from({ length: 8000 }, (_, k) => `long${k}`).join(' ') });
    await t.db.transaction((tx) => insertMessages(tx, 'inline', [long]));
    expect(await chunks()).toBeGreaterThan(before);
    const rows = await t.db.query<{ digest: string; body: string; words: string }>(
      `SELECT encode(digest, 'hex') AS digest, body, words::text AS words FROM tapedeck_store.messages WHERE tenant = 'inline'`,
    );
    expect(rows).toHaveLength(4);
    for (const m of [...few, long]) {
      const row = rows.find((r) => r.digest === digestKey(m.digest))!;
      expect(row.body).toBe(m.body.toString());
      expect(row.words).toBe(expectedWords(m));
    }
  });

  it('looks messages up by their key even when the statistics say the tenant holds only a few', async () => {
    // rows of ~3 KB, two to a page: a table of a few hundred pages, too large to scan per digest
    const held = Array.from({ length: 600 }, (_, k) =>
      message({ role: 'user', content: `held ${k} ${'x'.repeat(3000)}` }),
    );
    await t.db.transaction((tx) => insertMessages(tx, 'stale', held));
    const asked = [...held, ...Array.from({ length: 1200 }, (_, k) => message({ role: 'user', content: `new ${k}` }))];
    const digests = asked.map((m) => Buffer.from(m.digest));
    await withLaggingStatistics(t.db, 'tapedeck_store.messages', async () => {
      const scans = (sql: string) => scanConditions(t.db, sql, ['stale', digests], /^messages(_|$)/);
      // the hazard: under these statistics PostgreSQL 15 reads the tenant for a plain `= ANY` and
      // filters (PGlite's planner probes the key here)
      if (kind === 'postgres') {
        const plain = await scans(
          `SELECT id FROM tapedeck_store.messages WHERE tenant = $1 AND digest = ANY($2::bytea[]) AND words IS NOT NULL`,
        );
        expect(plain.some((by) => !by.includes('digest'))).toBe(true);
      }
      const lookup = await scans(STORED_MESSAGE_IDS);
      expect(lookup.length).toBeGreaterThan(0);
      for (const by of lookup) expect(by).toContain('digest');

      const ids = await t.db.transaction((tx) => insertMessages(tx, 'stale', asked));
      expect(new Set(asked.map((m) => ids.get(digestKey(m.digest)))).size).toBe(asked.length);
    });
  });

  it('stores the words read ahead as they are, drops them once stored, and reads those of a message taken for held', async () => {
    const a = message({ role: 'user', content: `read ahead on ${kind}: platform seven` });
    const b = message({ role: 'user', content: `read ahead on ${kind}: platform nine` });
    const read = new Map<string, Int32Array>();
    readWordsAhead([a, b], read);
    expect(a.words).toEqual(messageWords(a.body.toString()));
    // the same message derived from another span: read once
    const again = message({ role: 'user', content: `read ahead on ${kind}: platform seven` });
    readWordsAhead([again], read);
    expect(again.words).toBe(a.words);
    // what is stored is what was read, not read again: b goes with a's words
    b.words = a.words;
    await t.db.transaction((tx) => insertMessages(tx, 'ahead', [a, again, b]));
    const rows = await stored('ahead');
    expect(rows.get(digestKey(a.digest))!.words).toBe(expectedWords(a));
    expect(rows.get(digestKey(b.digest))!.words).toBe(expectedWords(a));
    expect([a.words, again.words, b.words]).toEqual([undefined, undefined, undefined]);
    readWordsAhead([a], new Map());
    expect(a.words).toBeUndefined();

    // Stored by a recent transaction: passed over. Deleted since, it is written with its words.
    const later = message({ role: 'user', content: `read ahead on ${kind}: platform seven` });
    readWordsAhead([later], new Map());
    expect(later.words).toBeUndefined();
    await t.db.query(`DELETE FROM tapedeck_store.messages WHERE tenant = 'ahead' AND digest = $1`, [
      Buffer.from(a.digest),
    ]);
    await t.db.transaction((tx) => insertMessages(tx, 'ahead', [later]));
    expect((await stored('ahead')).get(digestKey(a.digest))!.words).toBe(expectedWords(a));
  });
});
