/**
 * A log record that arrives for a span while that span is being erased (by an erasure or by
 * retention, which delete through the same code) must not leave a step behind without its
 * span. Late log records re-derive the steps of stored spans; the erasing transaction takes
 * the same trace locks ingest does, so the log record's transaction either finishes before
 * the delete (and its step is deleted with the span) or finds the span gone. PostgreSQL only:
 * PGlite runs one transaction at a time, so the two cannot overlap there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseSpans, eraseChosen, prepareErasure } from '../../src/erasure/erase-rows.js';
import { databaseKinds } from '../helpers/databases.js';
import { genAiRun } from '../helpers/genai-run.js';
import {
  JSON_TYPE,
  postOtlp,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
} from '../helpers/tapedeck-server.js';

describe.runIf(databaseKinds.includes('postgres'))('erasing a trace while its log records arrive (postgres)', () => {
  let t: TestTapedeck;

  beforeAll(async () => {
    t = await startTestTapedeck('postgres');
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await t?.close();
  });

  it('leaves no step of an erased span, whichever transaction commits first', async () => {
    // arrange: a run whose spans are stored, its log record not yet sent
    const r = genAiRun({ run: 'erased-meanwhile', question: 'Rain?', answer: 'No rain today.', user: 'u' });
    expect((await postOtlp(t, 'traces', r.traces, JSON_TYPE)).status).toBe(200);
    const countIn = async (table: string) =>
      Number(
        (
          await t.db.query<{ n: bigint }>(
            `SELECT count(*) AS n FROM tapedeck_store.${table} WHERE trace_id = decode($1, 'hex')`,
            [r.traceId],
          )
        )[0].n,
      );
    expect(await countIn('steps')).toBeGreaterThan(0);

    // act: the log record is posted while the erasing transaction has deleted but not committed
    let logsAnswer: ReturnType<typeof postOtlp> | undefined;
    await t.db.transaction(async (tx) => {
      await prepareErasure(tx);
      await chooseSpans(tx, "s.trace_id = decode($1, 'hex')", [r.traceId]);
      await eraseChosen(tx);
      logsAnswer = postOtlp(t, 'logs', r.logs, JSON_TYPE);
      await new Promise((resolve) => setTimeout(resolve, 500));
    });
    expect((await logsAnswer!).status).toBe(200);

    // assert: neither the spans nor a re-derived step of them is left
    expect([await countIn('spans'), await countIn('steps')]).toEqual([0, 0]);
  });
});
