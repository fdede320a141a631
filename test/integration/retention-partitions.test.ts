/**
 * Retention over day partitions, on PGlite and PostgreSQL, while ingest runs. Runs of three
 * days ago sit alone in their day's partition: retention detaches and drops the partitions of
 * that day (spans and log records) whole, with the runs' steps, payloads, recall rows and runs.
 * Runs of two days ago share their day with a tenant whose override keeps everything: that
 * partition stays, and only the bounded tenant's rows leave it. Meanwhile runs of now and late
 * runs of three days ago keep arriving; every one sent of now is still there at the end.
 *
 * And a store written before partitioning: its rows become one partition, deduplication of a
 * redelivered span still holds, the views read as before, and retention drops that partition
 * whole once its last day is past the bound.
 *
 * And a partition another server detached: left to it while its claim is fresh, finished by
 * this one once the claim is stale.
 *
 * And which servers make day partitions at all: only those whose retention drops them, so
 * that a store kept whole does not gather one a day.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  dayStart,
  DAY_NS,
  ensurePartitions,
  keptPartitionsWarning,
  partitionName,
  PARTITIONED_TABLES,
} from '../../src/erasure/partitions.js';
import { PayloadPurge } from '../../src/erasure/purge.js';
import { applyRetention, RetentionWorker } from '../../src/erasure/retention.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/store/database.js';
import { loadMigrations, migrate } from '../../src/store/migrate.js';
import { createTestDatabase, databaseKinds } from '../helpers/databases.js';
import {
  type GenAiRun,
  genAiRun,
  payloadFile,
  payloadRefsOf,
  sendGenAiRun,
  sendNowAndLate,
  usePayloadDirTapedeck,
} from '../helpers/genai-run.js';
import { span } from '../helpers/span-builder.js';
import { capturingLogger, randomTraceId, startTestTapedeck } from '../helpers/tapedeck-server.js';

const DAY_MS = 86_400_000;
const HOUR_NS = 3_600_000_000_000n;
const SHARED_ANSWER = `Expect light rain by the afternoon: ${'showers and a cool breeze, '.repeat(12)}`;
const OLD_WORD = 'partitionedwombat';

async function count(db: Database, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await db.query<{ n: bigint }>(sql, params))[0].n);
}

async function partitionsOf(db: Database, table: string): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [`tapedeck_store.${table}`],
  );
  return rows.map((r) => r.name);
}

describe.each(databaseKinds)('retention over day partitions on %s', (kind) => {
  const running = usePayloadDirTapedeck(kind);

  it('drops the days past every tenant bound whole, and only the bounded rows of a shared day, while ingest runs', async () => {
    const { t, payloadDir, payloads } = running;
    // arrange: partitions for the last four days, as a tapedeck running then made them
    const nowNs = () => BigInt(Date.now()) * 1_000_000n;
    const today = dayStart(nowNs());
    await ensurePartitions(t.db, today - 4n * DAY_NS);
    const threeDaysAgo = today - 3n * DAY_NS + 12n * HOUR_NS;
    const twoDaysAgo = today - 2n * DAY_NS + 12n * HOUR_NS;
    const oldRun = (run: string, answer: string, endNs = threeDaysAgo) =>
      genAiRun({ run, question: `Was ${OLD_WORD} sunny?`, answer, user: 'u-old', endNs });
    const old: GenAiRun[] = [
      oldRun('old-shared', SHARED_ANSWER),
      oldRun('old-own', `${OLD_WORD}: ${'a long and dated forecast, '.repeat(12)}`),
      oldRun('old-beside-archive', `${OLD_WORD} beside the archive`, twoDaysAgo),
    ];
    const recentNow = genAiRun({
      run: 'now-shared',
      question: 'Rain later?',
      answer: SHARED_ANSWER,
      user: 'u-now',
      endNs: nowNs(),
    });
    for (const r of [...old, recentNow]) await sendGenAiRun(t, r);
    const archived = span({ id: 'kept', traceId: randomTraceId(), attributes: { 'session.id': 'archive' } });
    await ingestSpans(
      [{ ...archived, startTimeUnixNano: twoDaysAgo - 1_000_000n, endTimeUnixNano: twoDaysAgo }],
      { tenant: 'archive' },
      t.running.store.ingest,
    );
    const spansDay3 = partitionName(PARTITIONED_TABLES[0], today - 3n * DAY_NS);
    const logsDay3 = partitionName(PARTITIONED_TABLES[1], today - 3n * DAY_NS);
    const spansDay2 = partitionName(PARTITIONED_TABLES[0], today - 2n * DAY_NS);
    const where = await t.db.query<{ p: string }>(
      `SELECT DISTINCT tableoid::regclass::text AS p FROM tapedeck_store.spans WHERE trace_id = ANY($1::bytea[]) ORDER BY 1`,
      [old.map((r) => Buffer.from(r.traceId, 'hex'))],
    );
    expect(where.map((r) => r.p)).toEqual([`tapedeck_store.${spansDay3}`, `tapedeck_store.${spansDay2}`].sort());
    const oldRefs = new Set([...(await payloadRefsOf(t, 'old-shared')), ...(await payloadRefsOf(t, 'old-own'))]);
    const keptRefs = await payloadRefsOf(t, 'now-shared');
    const oldOnly = [...oldRefs].filter((r) => !keptRefs.has(r));
    expect([oldOnly.length > 0, [...oldRefs].some((r) => keptRefs.has(r))]).toEqual([true, true]);

    const { logger, lines } = capturingLogger();
    const purge = new PayloadPurge(t.db, payloads, logger);
    const worker = new RetentionWorker(
      t.db,
      { defaultMs: DAY_MS, tenantsMs: new Map([['archive', null]]), batchSpans: 2, intervalMs: 20 },
      logger,
      () => purge.wake(),
    );

    // act: retention runs while runs of now, and late runs of three days ago, keep arriving
    purge.start();
    worker.start();
    const sent = await sendNowAndLate(t, (i) => oldRun(`old-late-${i}`, `${OLD_WORD} late answer ${i}`));
    const sentNow = [recentNow, ...sent.now];
    old.push(...sent.late);
    const cutoff = dayStart(nowNs() - DAY_NS).toString();
    const oldTraces = old.map((r) => r.traceId);
    const leftOf = async () =>
      (await count(
        t.db,
        `SELECT (SELECT count(*) FROM tapedeck_store.spans WHERE tenant = '' AND end_ns < $1::bigint)
              + (SELECT count(*) FROM tapedeck_store.erasure_payloads)
              + (SELECT count(*) FROM pg_class WHERE relname LIKE '%\\_expired\\_%') AS n`,
        [cutoff],
      )) + ((await partitionsOf(t.db, 'spans')).includes(spansDay3) ? 1 : 0);
    while ((await leftOf()) > 0) await new Promise((r) => setTimeout(r, 50));
    await worker.stop();
    await purge.stop();

    // assert: the day past every bound is gone whole, the shared day stays with the kept tenant
    expect((await partitionsOf(t.db, 'spans')).includes(spansDay3)).toBe(false);
    expect((await partitionsOf(t.db, 'logs')).includes(logsDay3)).toBe(false);
    expect((await partitionsOf(t.db, 'spans')).includes(spansDay2)).toBe(true);
    expect(await count(t.db, `SELECT count(*) AS n FROM tapedeck_store.${spansDay2}`)).toBe(1);
    expect(await count(t.db, "SELECT count(*) AS n FROM tapedeck_store.spans WHERE tenant = 'archive'")).toBe(1);
    const inOldTraces = (table: string) =>
      count(
        t.db,
        `SELECT count(*) AS n FROM tapedeck_store.${table} x, unnest($1::text[]) AS o(trace) WHERE x.trace_id = decode(o.trace, 'hex')`,
        [oldTraces],
      );
    expect([await inOldTraces('spans'), await inOldTraces('steps'), await inOldTraces('logs')]).toEqual([0, 0, 0]);
    for (const r of old) expect((await fetch(`${t.url}/v1/tapes/${r.run}`)).status).toBe(404);
    expect(((await (await fetch(`${t.url}/v1/recall?q=${OLD_WORD}`)).json()) as { runs: unknown[] }).runs).toEqual([]);
    expect(await count(t.db, "SELECT count(*) AS n FROM tapedeck.runs WHERE run LIKE 'old-%'")).toBe(0);
    for (const ref of oldOnly) expect(existsSync(payloadFile(payloadDir, ref))).toBe(false);
    for (const ref of keptRefs) expect(existsSync(payloadFile(payloadDir, ref))).toBe(true);
    // every span of now that was sent is there, and readable
    expect(
      await count(
        t.db,
        `SELECT count(*) AS n FROM tapedeck_store.spans x, unnest($1::text[]) AS o(trace) WHERE x.trace_id = decode(o.trace, 'hex')`,
        [sentNow.map((r) => r.traceId)],
      ),
    ).toBe(2 * sentNow.length);
    const tape = (await (await fetch(`${t.url}/v1/tapes/now-shared?resolve=true`)).json()) as { steps: unknown[] };
    expect(tape.steps).toHaveLength(2);
    // the passes count every old span, and name the partitions they dropped
    const passes = lines.filter((l) => l.action === 'retention.run');
    const detail = (l: (typeof passes)[number]) => l.detail as { spans: number; partitions: string[] };
    expect(passes.reduce((n, l) => n + Number(detail(l).spans), 0)).toBe(2 * old.length);
    expect(passes.flatMap((l) => detail(l).partitions)).toContain(spansDay3.replace('_p', '_expired_p'));
  }, 180_000);
});

describe.each(databaseKinds)('a store written before partitioning, on %s', (kind) => {
  it('becomes one partition that keeps deduplicating, reads as before, and is dropped whole once past the bound', async () => {
    // arrange: a span and a log record stored by the schema before partitions
    const t = await createTestDatabase(kind, { migrated: false });
    try {
      const migrations = loadMigrations();
      const before = migrations.findIndex((m) => m.name === 'time_partitions');
      await migrate(t.db, migrations.slice(0, before));
      const ended = BigInt(Date.now()) * 1_000_000n - 10n * DAY_NS;
      await t.db.query(
        `INSERT INTO tapedeck_store.spans (trace_id, span_id, name, kind, start_ns, end_ns, status_code, attributes, events, links, resource)
         VALUES ('\\x0af7651916cd43dd8448eb211c80319c', '\\x00000000000000a1', 'old', 'internal', $1, $1, 'ok', '{}', '[]', '[]', '{}')`,
        [ended.toString()],
      );
      await t.db.query(
        `INSERT INTO tapedeck_store.logs (record_key, trace_id, span_id, time_ns, observed_time_ns, attributes, resource)
         VALUES ('\\x01', '\\x0af7651916cd43dd8448eb211c80319c', '\\x00000000000000a1', $1, $1, '{}', '{}')`,
        [ended.toString()],
      );
      await t.db.exec('CREATE VIEW public.own_spans AS SELECT span_id, end_ns FROM tapedeck.spans');

      // act
      await migrate(t.db, migrations);

      // assert: one partition holds the old rows, which read as before through every view
      expect(await partitionsOf(t.db, 'spans')).toEqual(['spans_before_partitions', 'spans_default']);
      expect(await partitionsOf(t.db, 'logs')).toEqual(['logs_before_partitions', 'logs_default']);
      expect(await count(t.db, 'SELECT count(*) AS n FROM public.own_spans')).toBe(1);
      expect(await count(t.db, 'SELECT count(*) AS n FROM tapedeck.logs')).toBe(1);
      // a redelivered copy of the stored span is the same span
      const again = span({ id: 'a1', attributes: {} });
      const copy = { ...again, spanId: '00000000000000a1', startTimeUnixNano: ended, endTimeUnixNano: ended };
      const ingest = { db: t.db, derive: null };
      expect((await ingestSpans([copy], { tenant: '' }, ingest)).stored).toBe(0);
      expect(await count(t.db, 'SELECT count(*) AS n FROM tapedeck_store.spans')).toBe(1);

      // retention: the partition's last day is past a bound of a week, so it goes whole
      const passes = await applyRetention(
        t.db,
        { defaultMs: 7 * DAY_MS, tenantsMs: new Map(), batchSpans: 100, intervalMs: 0 },
        BigInt(Date.now()) * 1_000_000n,
      );
      expect(await partitionsOf(t.db, 'spans')).not.toContain('spans_before_partitions');
      expect(await partitionsOf(t.db, 'logs')).not.toContain('logs_before_partitions');
      expect(await count(t.db, 'SELECT count(*) AS n FROM public.own_spans')).toBe(0);
      expect(passes.map((p) => [p.receipt.spans, p.receipt.log_records, p.partitions.sort()])).toEqual([
        [1, 1, ['logs_expired_before_partitions', 'spans_expired_before_partitions']],
      ]);
    } finally {
      await t.drop();
    }
  }, 120_000);
});

describe.each(databaseKinds)('a partition another server detached, on %s', (kind) => {
  it('is left to that server while its claim is fresh, and finished once the claim is stale', async () => {
    // arrange: a day's partition with one span, detached as a pass of another server leaves it
    const t = await createTestDatabase(kind);
    try {
      const today = dayStart(BigInt(Date.now()) * 1_000_000n);
      await ensurePartitions(t.db, today - 3n * DAY_NS);
      const ended = today - 3n * DAY_NS + HOUR_NS;
      const one = {
        ...span({ id: 'gone', traceId: randomTraceId() }),
        startTimeUnixNano: ended,
        endTimeUnixNano: ended,
      };
      expect((await ingestSpans([one], { tenant: '' }, { db: t.db, derive: null })).stored).toBe(1);
      const day = partitionName(PARTITIONED_TABLES[0], today - 3n * DAY_NS);
      const detached = day.replace('_p', '_expired_p');
      const claim = (at: number) =>
        t.db.exec(`COMMENT ON TABLE tapedeck_store.${detached} IS '${JSON.stringify({ by: 'another', at })}'`);
      await t.db.exec(
        `ALTER TABLE tapedeck_store.spans DETACH PARTITION tapedeck_store.${day};
         ALTER TABLE tapedeck_store.${day} RENAME TO ${detached}`,
      );
      const settings = { defaultMs: DAY_MS, tenantsMs: new Map(), batchSpans: 10, intervalMs: 0 };
      const stillThere = async () => (await t.db.query(`SELECT to_regclass('tapedeck_store.${detached}') AS r`))[0].r;

      // act and assert: a fresh claim keeps it, a stale one does not
      await claim(Date.now());
      await applyRetention(t.db, settings, BigInt(Date.now()) * 1_000_000n);
      expect(await stillThere()).not.toBeNull();
      await claim(0);
      const passes = await applyRetention(t.db, settings, BigInt(Date.now()) * 1_000_000n);
      expect(await stillThere()).toBeNull();
      expect(passes.map((p) => [p.receipt.spans, p.partitions])).toEqual([[1, [detached]]]);
    } finally {
      await t.drop();
    }
  }, 120_000);
});

describe.each(databaseKinds)('the day partitions a server makes, on %s', (kind) => {
  it('are today and the coming days only where every tenant has a bound of a day or more', async () => {
    const today = dayStart(BigInt(Date.now()) * 1_000_000n);
    const coming = (i: 0 | 1) => [0n, 1n, 2n, 3n].map((d) => partitionName(PARTITIONED_TABLES[i], today + d * DAY_NS));
    const cases: [string, Partial<Config>, boolean][] = [
      ['retention off', {}, false],
      ['a week', { retentionMs: 7 * DAY_MS }, true],
      [
        'a week, one tenant kept whole',
        { retentionMs: 7 * DAY_MS, retentionTenants: new Map([['archive', null]]) },
        false,
      ],
      ['tenants bounded, the rest kept', { retentionTenants: new Map([['t1', 7 * DAY_MS]]) }, false],
      ['twelve hours', { retentionMs: DAY_MS / 2 }, false],
    ];
    for (const [name, config, made] of cases) {
      const t = await startTestTapedeck(kind, config);
      try {
        const spans = await partitionsOf(t.db, 'spans');
        const logs = await partitionsOf(t.db, 'logs');
        expect({ name, spans, logs }).toEqual({
          name,
          spans: [...(made ? coming(0) : []), 'spans_default'].sort(),
          logs: [...(made ? coming(1) : []), 'logs_default'].sort(),
        });
      } finally {
        await t.close();
      }
    }
  }, 120_000);
});

describe.each(databaseKinds)('time partitions no retention drops, on %s', (kind) => {
  it('are named at start once there are more than a week of them', async () => {
    const t = await createTestDatabase(kind);
    try {
      const now = BigInt(Date.now()) * 1_000_000n;
      // four days each, as an earlier version made them a day at a time
      await ensurePartitions(t.db, now - 7n * DAY_NS);
      const four = await keptPartitionsWarning(t.db);
      await ensurePartitions(t.db, now - 3n * DAY_NS);
      const eight = await keptPartitionsWarning(t.db);
      expect({ four, eight }).toEqual({
        four: null,
        eight: expect.stringMatching(
          /^tapedeck_store\.spans has 8 time partitions that retention does not drop: .*"Upgrading"/,
        ),
      });
    } finally {
      await t.drop();
    }
  });
});
