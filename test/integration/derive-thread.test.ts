/**
 * On a PostgreSQL server ingest derives steps on a worker thread (src/derive/derive-thread.ts),
 * except for transactions holding more than WORKER_MAX_CHARS of attribute text, which it
 * derives on the main thread. Whichever way, the store must hold the same rows: steps (through
 * tapedeck.tape_steps), the spans' run facts, and recall's words (of the steps and of the messages),
 * for every corpus capture sent one request each, all of them in one request (many chunks),
 * a request with spans stored before (restated steps), and a large request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import { CHUNK_SPANS, WORKER_MAX_CHARS } from '../../src/derive/derive-thread.js';
import type { SpanRecord } from '../../src/spans/span-record.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { span } from '../helpers/span-builder.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const STEPS = `SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id`;
const SPANS = `SELECT trace_id, span_id, own_run, own_parent_run, run_id, parent_run FROM tapedeck_store.spans ORDER BY trace_id, span_id`;
const WORDS = `SELECT trace_id, span_id, words FROM tapedeck_store.steps UNION ALL SELECT digest, NULL, words FROM tapedeck_store.messages ORDER BY 1, 2`;

/** A copy of spans in traces of their own (the same spans again, as new ones). */
function retraced(spans: readonly SpanRecord[], salt: string): SpanRecord[] {
  return spans.map((s) => ({ ...s, traceId: `${salt}${s.traceId.slice(salt.length)}` }));
}

/** Chat spans (OTel GenAI layout) whose prompts add up to more than WORKER_MAX_CHARS. */
function largeRequest(): SpanRecord[] {
  const prompt = (i: number) => `${'lorem ipsum dolor sit amet '.repeat(7000)} number ${i}`; // ~190 KB, under the offload threshold
  const count = Math.ceil(WORKER_MAX_CHARS / prompt(0).length) + 2;
  return Array.from({ length: count }, (_, i) =>
    span({
      name: 'chat gpt-4o',
      id: `large-${i}`,
      traceId: `${(i % 3).toString().repeat(2)}${'ab'.repeat(15)}`,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.conversation.id': 'large-session',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt(i) }] }]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: `answer ${i}` }], finish_reason: 'stop' },
        ]),
      },
    }),
  );
}

const postgres = databaseKinds.filter((k) => k === 'postgres');

describe.skipIf(postgres.length === 0)('derivation on the worker thread and on the main thread', () => {
  let onWorker: TestTapedeck;
  let onMain: TestTapedeck;
  beforeAll(async () => {
    onWorker = await startTestTapedeck('postgres');
    onMain = await startTestTapedeck('postgres', {}, { deriveWorker: false });
    const captures = await Promise.all(listCaptures().map(loadCapture));
    const together = captures.flatMap((c, i) => retraced(c.spans, `f${i.toString(16).padStart(2, '0')}`));
    expect(together.length).toBeGreaterThan(2 * CHUNK_SPANS);
    for (const t of [onWorker, onMain]) {
      const ingest = t.running.store.ingest;
      for (const capture of captures) {
        if (capture.logs.length > 0) await ingestLogs(capture.logs, { tenant: '' }, ingest);
        await ingestSpans(capture.spans, { tenant: '' }, ingest);
      }
      await ingestSpans(together, { tenant: '' }, ingest);
      // stored spans again, beside new ones: their steps are restated (upserted), not copied
      await ingestSpans([...captures[0].spans, ...retraced(captures[1].spans, 'e0')], { tenant: 'acme' }, ingest);
      await ingestSpans([...captures[0].spans, ...retraced(captures[1].spans, 'e0')], { tenant: 'acme' }, ingest);
      await ingestSpans(largeRequest(), { tenant: '' }, ingest);
    }
  }, 180_000);
  afterAll(async () => {
    await onWorker?.close();
    await onMain?.close();
  });

  it('store the same steps, run facts and words', async () => {
    const steps = await onWorker.db.query(STEPS);
    expect(steps.length).toBeGreaterThan(CHUNK_SPANS);
    expect(steps).toEqual(await onMain.db.query(STEPS));
    expect(await onWorker.db.query(SPANS)).toEqual(await onMain.db.query(SPANS));
    const words = await onWorker.db.query(WORDS);
    expect(words.length).toBeGreaterThan(0);
    expect(words).toEqual(await onMain.db.query(WORDS));
  });

  it('recall finds the large request by words of its prompts', async () => {
    for (const t of [onWorker, onMain]) {
      const found = (await (await fetch(`${t.url}/v1/recall?q=${encodeURIComponent('lorem dolor 7')}`)).json()) as {
        runs: { run: string; score: number }[];
      };
      expect(found.runs).toEqual([expect.objectContaining({ run: 'large-session', score: 1 })]);
    }
  });
});
