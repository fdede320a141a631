/**
 * GET /v1/diff spends one deadline on its tape reads: every query it makes carries the
 * deadline's signal, and a read still waiting when the budget runs out is stopped in the
 * database, not left running behind the 400 deadline_exceeded answer.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loadDiffTape } from '../../src/diff/load-tape.js';
import { createDiffRoutes } from '../../src/diff/routes.js';
import { createRunRoutes } from '../../src/api/run-routes.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { silentLogger } from '../../src/logger.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import type { Database } from '../../src/store/database.js';
import { openStore, type Store } from '../../src/open-store.js';
import { appWith } from '../helpers/app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { recallRuns, spansOf } from '../unit/recall/recall-fixtures.js';

describe.each(databaseKinds)('diff deadline on %s', (kind) => {
  let t: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    t = await createTestDatabase(kind, { migrated: false });
    store = await openStore(loadConfig({}), silentLogger(), { db: t.db, payloads: createMemoryPayloadStore() });
    for (const run of recallRuns.slice(0, 2)) await ingestSpans(spansOf(run), { tenant: '' }, store.ingest);
  });
  afterAll(async () => {
    await t?.drop();
  });

  const diffApp = (db: Database, queryDeadlineMs: number) =>
    appWith(
      createDiffRoutes(
        { loadTape: (run, tenant, opts) => loadDiffTape({ db, payloads: store.payloads }, tenant ?? '', run, opts) },
        { queryDeadlineMs, pricing: null },
      ),
    );

  it('passes the deadline signal to every query of the tape reads', async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const recording: Database = {
      ...store.db,
      query: (sql, params, options) => {
        signals.push(options?.signal);
        return store.db.query(sql, params, options);
      },
    };
    const res = await diffApp(recording, 10_000).request('/v1/diff?a=weather-ok&b=weather-failed');
    expect(res.status).toBe(200);
    expect(signals.length).toBeGreaterThanOrEqual(4);
    for (const signal of signals) {
      expect(signal).toBeInstanceOf(AbortSignal);
      expect(signal?.aborted).toBe(true); // released once answered
    }
  });

  it('passes the deadline signal to every query of reconstruct, tree and the dataset summary', async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const recording: Database = {
      ...store.db,
      query: (sql, params, options) => {
        signals.push(options?.signal);
        return store.db.query(sql, params, options);
      },
    };
    const app = appWith(createRunRoutes({ ...store, db: recording }, loadConfig({})));
    for (const path of [
      '/v1/runs/weather-ok/reconstruct',
      '/v1/runs/weather-ok/tree',
      '/v1/datasets/chat.jsonl?summary=true',
    ]) {
      signals.length = 0;
      const res = await app.request(path);
      expect(res.status, path).toBe(200);
      expect(signals.length, path).toBeGreaterThanOrEqual(1);
      for (const signal of signals) expect(signal, path).toBeInstanceOf(AbortSignal);
    }
  });

  it.runIf(kind === 'postgres')(
    'stops a tape read waiting on a lock when the deadline passes; the next diff is answered',
    async () => {
      const holder = new pg.Client({ connectionString: t.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE tapedeck_store.spans IN ACCESS EXCLUSIVE MODE');
        const res = await diffApp(store.db, 300).request('/v1/diff?a=weather-ok&b=weather-failed');
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: { type: string } }).error.type).toBe('deadline_exceeded');
        const waitingOnLock = async () => {
          const { rows } = await holder.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
          );
          return rows[0].n as number;
        };
        let waiting = await waitingOnLock();
        for (let i = 0; i < 100 && waiting > 0; i++) {
          await new Promise((r) => setTimeout(r, 50));
          waiting = await waitingOnLock();
        }
        expect(waiting).toBe(0);
      } finally {
        await holder.query('ROLLBACK');
        await holder.end();
      }
      const res = await diffApp(store.db, 10_000).request('/v1/diff?a=weather-ok&b=weather-failed');
      expect(res.status).toBe(200);
    },
    20_000,
  );
});
