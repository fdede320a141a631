import { describe, expect, it } from 'vitest';
import { createMemoryPayloadStore } from '../../../src/payloads/memory-payload-store.js';
import type { RecallDeps } from '../../../src/recall/recall.js';
import { createRecallRoutes } from '../../../src/recall/routes.js';
import { appWith } from '../../helpers/app.js';
import type { Database } from '../../../src/store/database.js';

/** A database whose every query takes `ms` and ignores any signal; `log` gets each query's
 * first words when it starts, and 'done' when one returns. */
function slowDb(ms: number, log: string[]): Database {
  const db: Database = {
    kind: 'postgres',
    async query<Row>(sql: string): Promise<Row[]> {
      log.push(sql.trim().split(/\s+/).slice(0, 3).join(' '));
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (ms > 0) log.push('done');
      return (/count\(\*\)|sum\(/.test(sql) ? [{ n: 0 }] : []) as Row[];
    },
    async exec() {},
    transaction: (fn) => fn(db),
    async ping() {},
    async close() {},
  };
  return db;
}

function deps(db: Database): RecallDeps {
  return { db, payloads: createMemoryPayloadStore(), pricing: null };
}

describe('GET /v1/recall (in memory)', () => {
  it('answers 400 deadline_exceeded on time when a read overruns, and starts nothing after answering', async () => {
    const log: string[] = [];
    const app = appWith(createRecallRoutes(deps(slowDb(300, log)), { queryDeadlineMs: 30 }));
    const res = await app.request('/v1/recall?q=weather');
    expect(log).toEqual(['WITH matching AS']); // answered while the first read still ran
    expect(res.status).toBe(400);
    expect(JSON.parse(await res.text()).error).toMatchObject({ type: 'deadline_exceeded' });
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(log).toEqual(['WITH matching AS', 'done']); // it came back late and nothing followed it
  });

  it('answers an empty list when nothing matches', async () => {
    const log: string[] = [];
    const res = await createRecallRoutes(deps(slowDb(0, log)), { queryDeadlineMs: 1000 }).request(
      '/v1/recall?q=weather',
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"runs":[],"truncated":false,"unindexed_steps":0}');
  });

  it('refuses bounds that are not whole numbers of one or more at construction', () => {
    expect(() => createRecallRoutes(deps(slowDb(0, [])), { queryDeadlineMs: 1, maxRunsRead: 0 })).toThrow(
      /maxRunsRead must be a whole number >= 1/,
    );
  });

  it('refuses more words than a query may hold', async () => {
    const q = Array.from({ length: 33 }, (_, i) => `w${i}`).join('+');
    const res = await appWith(createRecallRoutes(deps(slowDb(0, [])), { queryDeadlineMs: 1000 })).request(
      `/v1/recall?q=${q}`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(await res.text()).error.message).toBe(
      'q holds 33 different words; a recall query has at most 32',
    );
  });
});
