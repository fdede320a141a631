/**
 * Retention over a running tapedeck, on PGlite and PostgreSQL: runs that ended two days ago
 * and runs of now are sent over OTLP/HTTP while the retention worker (the one `serve` runs
 * with --retention) passes every few milliseconds in batches of two spans. The old spans
 * disappear with their steps, log records, recall index rows, runs and the payloads only they
 * referenced; every span of now that was sent is still there, a payload a recent run still
 * references stays, and a tenant whose override keeps everything keeps it. Each pass is
 * logged and audited with what it deleted.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PayloadPurge } from '../../src/erasure/purge.js';
import { RetentionWorker } from '../../src/erasure/retention.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { databaseKinds } from '../helpers/databases.js';
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
import { capturingLogger, randomTraceId } from '../helpers/tapedeck-server.js';

const DAY_MS = 86_400_000;
const SHARED_ANSWER = `Expect light rain by the afternoon: ${'showers and a cool breeze, '.repeat(12)}`;
const OLD_WORD = 'obsoletequokka';

describe.each(databaseKinds)('retention on %s', (kind) => {
  const running = usePayloadDirTapedeck(kind);

  it('deletes spans older than the bound with their steps, payloads, recall rows and runs while ingest continues', async () => {
    const { t, payloadDir, payloads } = running;
    // arrange: old runs (one sharing its answer with a run of now), and a tenant kept whole
    const nowNs = () => BigInt(Date.now()) * 1_000_000n;
    const oldEnd = nowNs() - 2n * BigInt(DAY_MS) * 1_000_000n;
    const oldRun = (run: string, answer: string) =>
      genAiRun({ run, question: `Was ${OLD_WORD} sunny?`, answer, user: 'u-old', endNs: oldEnd });
    const old: GenAiRun[] = [
      oldRun('old-shared', SHARED_ANSWER),
      oldRun('old-own', `${OLD_WORD}: ${'a long and dated forecast, '.repeat(12)}`),
    ];
    const recentNow = genAiRun({
      run: 'now-shared',
      question: 'Rain later?',
      answer: SHARED_ANSWER,
      user: 'u-now',
      endNs: nowNs(),
    });
    for (const r of [...old, recentNow]) await sendGenAiRun(t, r);
    await ingestSpans(
      [span({ id: 'kept', traceId: randomTraceId(), attributes: { 'session.id': 'archive' } })],
      { tenant: 'archive' },
      t.running.store.ingest,
    );
    expect(((await (await fetch(`${t.url}/v1/recall?q=${OLD_WORD}`)).json()) as { runs: unknown[] }).runs).toHaveLength(
      2,
    );
    const oldRefs = new Set([...(await payloadRefsOf(t, 'old-shared')), ...(await payloadRefsOf(t, 'old-own'))]);
    const keptRefs = await payloadRefsOf(t, 'now-shared');
    const oldOnly = [...oldRefs].filter((r) => !keptRefs.has(r));
    expect([oldOnly.length > 0, [...oldRefs].some((r) => keptRefs.has(r))]).toEqual([true, true]);
    for (const ref of oldRefs) expect(existsSync(payloadFile(payloadDir, ref))).toBe(true);

    const { logger, lines } = capturingLogger();
    const purge = new PayloadPurge(t.db, payloads, logger);
    const worker = new RetentionWorker(
      t.db,
      {
        defaultMs: DAY_MS,
        tenantsMs: new Map([['archive', null]]),
        batchSpans: 2,
        intervalMs: 20,
      },
      logger,
      () => purge.wake(),
    );

    // act: retention runs while runs of now, and more old ones, keep arriving
    purge.start();
    worker.start();
    const sent = await sendNowAndLate(t, (i) => oldRun(`old-late-${i}`, `${OLD_WORD} late answer ${i}`));
    const sentNow = [recentNow, ...sent.now];
    old.push(...sent.late);
    const cutoff = (nowNs() - BigInt(DAY_MS) * 1_000_000n).toString();
    const count = async (sql: string, params: unknown[] = []) =>
      Number((await t.db.query<{ n: bigint }>(sql, params))[0].n);
    const oldTraces = old.map((r) => r.traceId);
    const leftOf = () =>
      count(
        `SELECT (SELECT count(*) FROM tapedeck_store.spans WHERE tenant = '' AND end_ns < $1::bigint)
              + (SELECT count(*) FROM tapedeck_store.erasure_payloads) AS n`,
        [cutoff],
      );
    while ((await leftOf()) > 0) await new Promise((r) => setTimeout(r, 50));
    await worker.stop();
    await purge.stop();

    // assert: nothing old is left, in any table or on any route
    const inOldTraces = (table: string) =>
      count(
        `SELECT count(*) AS n FROM tapedeck_store.${table} x, unnest($1::text[]) AS o(trace) WHERE x.trace_id = decode(o.trace, 'hex')`,
        [oldTraces],
      );
    expect([await inOldTraces('spans'), await inOldTraces('steps'), await inOldTraces('logs')]).toEqual([0, 0, 0]);
    for (const r of old) expect((await fetch(`${t.url}/v1/tapes/${r.run}`)).status).toBe(404);
    expect(((await (await fetch(`${t.url}/v1/recall?q=${OLD_WORD}`)).json()) as { runs: unknown[] }).runs).toEqual([]);
    expect(await count("SELECT count(*) AS n FROM tapedeck.runs WHERE run LIKE 'old-%'")).toBe(0);
    for (const ref of oldOnly) expect(existsSync(payloadFile(payloadDir, ref))).toBe(false);
    for (const ref of keptRefs) expect(existsSync(payloadFile(payloadDir, ref))).toBe(true);
    // every span of now that was sent is there, and readable
    const nowSpans = await count(
      `SELECT count(*) AS n FROM tapedeck_store.spans x, unnest($1::text[]) AS o(trace) WHERE x.trace_id = decode(o.trace, 'hex')`,
      [sentNow.map((r) => r.traceId)],
    );
    expect(nowSpans).toBe(2 * sentNow.length);
    const tape = (await (await fetch(`${t.url}/v1/tapes/now-shared?resolve=true`)).json()) as {
      steps: unknown[];
      resolved_partial: boolean;
    };
    expect([tape.steps.length, tape.resolved_partial]).toEqual([2, false]);
    expect(await count("SELECT count(*) AS n FROM tapedeck_store.spans WHERE tenant = 'archive'")).toBe(1);
    // each pass is logged and audited with its counts, and together they count every old span
    const passes = lines.filter((l) => l.action === 'retention.run');
    expect(passes.reduce((n, l) => n + Number((l.detail as { spans: number }).spans), 0)).toBe(2 * old.length);
    expect(passes.every((l) => (l.detail as { batches: number }).batches >= 1)).toBe(true);
    expect(await count("SELECT count(*) AS n FROM tapedeck.audit_log WHERE action = 'retention.run'")).toBe(
      passes.length,
    );
  }, 120_000);
});
