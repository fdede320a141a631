/**
 * Recall summarizes runs from their outlines: each step in tape order without its prompt and
 * answer. An outline assembles in the stored tape's order, with the same steps, for every
 * corpus capture; and recall, answering, reads no prompt text from the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { silentLogger } from '../../src/logger.js';
import type { Step } from '../../src/normalize/step.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { createRecallRoutes } from '../../src/recall/routes.js';
import type { Database, QueryOptions } from '../../src/store/database.js';
import { openStore, type Store } from '../../src/open-store.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { appWith } from '../helpers/app.js';
import { type CaptureRef, listCaptures } from '../helpers/corpus.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { ingestRecords, loadCaptureRecords, openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';
import { NOW_NS, spansOf } from '../unit/recall/recall-fixtures.js';

const captures = listCaptures();
const tenantOf = (ref: CaptureRef) => `${ref.layout}/${ref.scenario}`;

/** What a summary reads of a step: everything but its prompt and answer. */
const summaryOf = (s: Step) => ({
  index: s.index,
  span_id: s.span_id,
  kind: s.kind,
  name: s.name,
  model: s.model,
  tool: s.tool,
  fingerprint: s.fingerprint,
  status: s.status,
  tokens: s.tokens,
  cost_usd: s.cost_usd,
  start_ns: s.start_ns,
  duration_ns: s.duration_ns,
});

describe.each(databaseKinds)('recall outlines on %s', (kind) => {
  describe('every corpus capture', () => {
    let t: TestStore;
    beforeAll(async () => {
      t = await openTestStore(kind);
      for (const ref of captures) await ingestRecords(t.store, await loadCaptureRecords(ref), tenantOf(ref));
    }, 180_000);
    afterAll(async () => t?.drop());

    it('assembles each run in the stored tape order, with the same steps', async () => {
      let compared = 0;
      for (const ref of captures) {
        const tenant = tenantOf(ref);
        const runs = await t.store.db.query<{ run: string }>(
          'SELECT DISTINCT run_id AS run FROM tapedeck_store.spans WHERE tenant = $1 AND run_id IS NOT NULL',
          [tenant],
        );
        for (const { run } of runs) {
          const full = await readTape(t.store, tenant, run);
          const outline = await readTape(t.store, tenant, run, { bodies: 'outline' });
          expect(outline?.steps.map(summaryOf), `${tenant} ${run}`).toEqual(full?.steps.map(summaryOf));
          expect(outline?.truncated).toBe(full?.truncated);
          compared += full?.steps.length ?? 0;
        }
      }
      expect(compared).toBeGreaterThan(100);
    });
  });

  describe('long prompts', () => {
    const PROMPT_CHARS = 100_000;
    const RUNS = 12;
    let test: TestDatabase;
    let store: Store;
    beforeAll(async () => {
      test = await createTestDatabase(kind, { migrated: false });
      // Prompts stay in the database (no offload), as they do below the default threshold.
      const config = { ...loadConfig({}), payloadThresholdBytes: 4 * PROMPT_CHARS };
      store = await openStore(config, silentLogger(), { db: test.db, payloads: createMemoryPayloadStore() });
      for (let i = 0; i < RUNS; i++) {
        const prompt = `zeppelin over Lyon, take ${i}: ${'ballast '.repeat(PROMPT_CHARS / 8)}`;
        const spans = spansOf({ run: `long-${i}`, start: i * 1_000, steps: [{ llm: prompt, answer: 'landed' }] });
        await ingestSpans(spans, { tenant: '' }, store.ingest);
      }
    }, 120_000);
    afterAll(async () => test?.drop());

    it('ranks the runs without reading their prompts from the database', async () => {
      let charsRead = 0;
      const counting: Database = {
        ...store.db,
        query: async <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
          const rows = await store.db.query<Row>(sql, params, options);
          charsRead += JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)).length;
          return rows;
        },
      };
      const app = appWith(
        createRecallRoutes(
          { db: counting, payloads: store.payloads, pricing: null },
          { queryDeadlineMs: 60_000, nowNs: () => NOW_NS },
        ),
      );
      // The first query indexes the runs (reading their text once); the second only answers.
      expect((await app.request('/v1/recall?q=zeppelin+lyon')).status).toBe(200);
      charsRead = 0;
      const res = await app.request('/v1/recall?q=zeppelin+lyon');
      expect(res.status).toBe(200);
      const body = (await res.json()) as { runs: { run: string; steps: number; skeleton: string[] }[] };
      expect(body.runs).toHaveLength(RUNS);
      expect(body.runs[0]).toMatchObject({ steps: 2, skeleton: ['agent:planner', 'llm:gpt-4o'] });
      // Whole tapes would be RUNS prompts; the summaries together are less than one.
      expect(charsRead).toBeLessThan(PROMPT_CHARS);
    });
  });
});
