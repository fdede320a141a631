/**
 * Migration 0023 on a store written by the version before it, on PGlite and PostgreSQL: the
 * messages it holds read as not written canonical (a tape renders them again), the messages
 * written from then on as canonical, and a tape's answer is the bytes of the parsed tape for
 * both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { renderJsonBytes } from '../../src/json/canonical.js';
import { silentLogger } from '../../src/logger.js';
import { openStore, type Store } from '../../src/open-store.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { readTapeJson } from '../../src/tapes/tape-json.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { conversationSpans } from '../helpers/conversation-spans.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { copyRows, databaseBefore } from '../helpers/store-before.js';

const conversation = (run: string) =>
  conversationSpans({
    run,
    system: 'You plan train journeys.',
    questions: ['Lyon to Turin?', 'And back?'],
    answer: (i) => `${run}: change at stop ${i}.`,
  });

describe.each(databaseKinds)('migration 0023 (canonical messages) on %s', (kind) => {
  let now: TestDatabase;
  let before: TestDatabase;
  let store: Store;
  const config = loadConfig({});

  beforeAll(async () => {
    now = await createTestDatabase(kind);
    const nowStore = await openStore(config, silentLogger(), { db: now.db, payloads: createMemoryPayloadStore() });
    await ingestSpans(conversation('before'), { tenant: '' }, nowStore.ingest);
    // The same rows in a store at the migration before, its messages in jsonb's rendering as
    // a store migrated from jsonb columns holds them.
    before = await databaseBefore(kind, 'canonical_messages');
    for (const [table, select] of [
      ['spans', 'SELECT row_to_json(s)::text AS j FROM tapedeck_store.spans s'],
      ['messages', "SELECT (to_jsonb(m) - 'canonical')::text AS j FROM tapedeck_store.messages m"],
      ['steps', 'SELECT row_to_json(st)::text AS j FROM tapedeck_store.steps st'],
    ])
      await copyRows(now.db, before.db, table, select);
    await before.db.exec(
      `UPDATE tapedeck_store.messages SET body = body::jsonb::text;
       SELECT setval(pg_get_serial_sequence('tapedeck_store.messages', 'id'), (SELECT max(id) FROM tapedeck_store.messages));`,
    );
    store = await openStore(config, silentLogger(), { db: before.db, payloads: createMemoryPayloadStore() });
    await ingestSpans(conversation('after'), { tenant: '' }, store.ingest);
  }, 120_000);
  afterAll(async () => {
    await now?.drop();
    await before?.drop();
  });

  it('marks the messages held before as not canonical, those written since as canonical', async () => {
    const rows = await before.db.query<{ canonical: boolean; spaced: boolean; n: number }>(
      `SELECT canonical, body LIKE '%": %' AS spaced, count(*)::int AS n
         FROM tapedeck_store.messages GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    expect(rows.map(({ canonical, spaced }) => ({ canonical, spaced }))).toEqual([
      { canonical: false, spaced: true },
      { canonical: true, spaced: false },
    ]);
  });

  it('answers either run with the bytes the parsed tape renders to', async () => {
    for (const run of ['before', 'after']) {
      const chunks = await readTapeJson(store, '', run);
      const tape = await readTape(store, '', run);
      expect(tape?.steps.length).toBe(2);
      expect(Buffer.concat([...(chunks ?? [])]).toString('utf8')).toBe(renderJsonBytes(tape).toString('utf8'));
    }
  });
});
