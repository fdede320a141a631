/**
 * GET /v1/tapes/{run} writes the stored text into its answer rather than parsing and
 * rendering it again (src/tapes/tape-json.ts). Pinned here against the renderer it replaced,
 * renderJsonBytes over the parsed tape (tape-service.ts's readTape), on every corpus capture:
 * the same bytes, for steps written by this version and for steps and messages whose stored
 * text is in jsonb's rendering, as stores migrated from jsonb columns hold it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import { renderJsonBytes } from '../../src/json/canonical.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { readTapeJson } from '../../src/tapes/tape-json.js';
import { conversationSpans } from '../helpers/conversation-spans.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

describe.each(databaseKinds)('tape JSON from the stored text on %s', (kind) => {
  let t: TestTapedeck;
  let runs: string[];
  beforeAll(async () => {
    t = await startTestTapedeck(kind);
    for (const ref of listCaptures()) {
      const capture = await loadCapture(ref);
      await ingestLogs(capture.logs, { tenant: '' }, t.running.store.ingest);
      await ingestSpans(capture.spans, { tenant: '' }, t.running.store.ingest);
    }
    runs = (
      await t.db.query<{ run: string }>('SELECT DISTINCT run_id AS run FROM tapedeck_store.spans ORDER BY 1')
    ).map((r) => r.run);
  }, 300_000);
  afterAll(async () => {
    await t?.close();
  });

  /** Every run's answer against the previous renderer's; the runs whose answer held `needle`. */
  async function expectSameAsRendered(needle?: string): Promise<number> {
    let holding = 0;
    for (const run of runs) {
      const res = await fetch(`${t.url}/v1/tapes/${encodeURIComponent(run)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      const served = Buffer.from(await res.arrayBuffer());
      // one chunk: sent whole, with its length
      if (served.length < 512 * 1024) expect(res.headers.get('content-length')).toBe(String(served.length));
      const tape = await readTape(t.running.store, '', run);
      expect(served.toString('utf8'), run).toBe(renderJsonBytes(tape).toString('utf8'));
      if (needle && served.includes(needle)) holding++;
    }
    return holding;
  }

  it('answers every capture with the bytes the parsed tape renders to', async () => {
    expect(runs.length).toBeGreaterThan(20);
    const [{ n }] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM tapedeck_store.steps WHERE request_messages IS NOT NULL',
    );
    expect(n).toBeGreaterThan(0); // lists in the message store are among them
    await expectSameAsRendered();
  }, 300_000);

  it('writes a long answer in chunks that join to the same bytes', async () => {
    const tapes = await Promise.all(runs.map((run) => readTape(t.running.store, '', run)));
    const tape = tapes.reduce((a, b) => ((b?.steps.length ?? 0) > (a?.steps.length ?? 0) ? b : a));
    if (!tape) throw new Error('no tape');
    expect(tape.steps.length).toBeGreaterThan(2);
    // a chunk taken after every step, and the rest of the document
    const chunks = [...((await readTapeJson(t.running.store, '', tape.run, { chunkBytes: 1 })) ?? [])];
    expect(chunks.length).toBe(tape.steps.length + 1);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(renderJsonBytes(tape).toString('utf8'));
  });

  it('sends a long answer in chunks that join to the same bytes', async () => {
    // ~2 MB of answer, every answer different, sent in chunks of the standard size whose
    // buffers are written again once sent (http/chunked-body.ts).
    const run = 'long-answer';
    const spans = conversationSpans({
      run,
      system: 'You answer at length.',
      questions: Array.from({ length: 30 }, (_, i) => `Question ${i}?`),
      answer: (i) => `${i}:`.padEnd(4096, String.fromCharCode(0x61 + (i % 26))),
    });
    await ingestSpans(spans, { tenant: '' }, t.running.store.ingest);
    const res = await fetch(`${t.url}/v1/tapes/${run}`);
    expect(res.headers.get('content-length')).toBeNull();
    const served = Buffer.from(await res.arrayBuffer());
    expect(served.length).toBeGreaterThan(3 * 512 * 1024);
    const tape = await readTape(t.running.store, '', run);
    expect(served.toString('utf8')).toBe(renderJsonBytes(tape).toString('utf8'));
  });

  it('renders text stored in another rendering again, to the same bytes', async () => {
    // What a store migrated from jsonb columns holds: jsonb's text (spaces, keys by length,
    // numbers written out), in steps and in moved messages alike.
    await t.db.exec(`
      UPDATE tapedeck_store.steps st
         SET request = tapedeck_store.step_body(st.tenant, st.request, st.request_messages, NULL)::jsonb::text,
             request_messages = NULL
       WHERE st.request_messages IS NOT NULL AND st.span_id = (SELECT span_id FROM tapedeck_store.steps WHERE request_messages IS NOT NULL ORDER BY span_id LIMIT 1);
      UPDATE tapedeck_store.steps SET response = response::jsonb::text
       WHERE response IS NOT NULL AND response NOT LIKE '%\\u0000%';
      UPDATE tapedeck_store.messages SET body = body::jsonb::text, canonical = false WHERE body NOT LIKE '%\\u0000%';
      UPDATE tapedeck_store.steps SET response = '{"b": [1.50, 1000000000000000000000], "a": 0.0000001}'
       WHERE kind = 'tool' AND span_id = (SELECT span_id FROM tapedeck_store.steps WHERE kind = 'tool' ORDER BY span_id LIMIT 1);
    `);
    const [{ n }] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tapedeck_store.messages WHERE body LIKE '%": %'`,
    );
    expect(n).toBeGreaterThan(0);
    expect(await expectSameAsRendered('{"a":1e-7,"b":[1.5,1e+21]}')).toBe(1);
  }, 300_000);
});
