// What a conversation costs to store, by its length: one run of N model calls, each resending
// the whole history so far (a user message and an assistant answer per call, each about
// BENCH_MESSAGE_BYTES, default 2,048, of English-like text), in the OTel GenAI layout
// (gen_ai.input.messages) and the OpenLLMetry layout (gen_ai.prompt.N.*), ingested in-process
// (derive, COPY, message store) and indexed by recall. Prints, per run, the bytes its rows take
// as stored (pg_column_size, after TOAST compression, indexes not counted) for what is derived
// (steps and messages with recall's words, payloads) and for the raw spans, and each length
// against the 10-call run. `node bench/conversation.mjs` counts tables with their indexes.
// Not part of `npm test` or `npm run bench`; docs/benchmarks.md has the figures.
//
// Run after `npm run build`:  node scripts/conversation-storage.mjs
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test. The database is dropped afterwards
// (BENCH_KEEP=1 keeps it).
import os from 'node:os';
import { openScratchDatabase } from '../bench/lib/scratch-database.mjs';
import { createDeriveSpans } from '../dist/src/derive/derive.js';
import { ingestSpans } from '../dist/src/ingest/ingest.js';
import { createMemoryPayloadStore } from '../dist/src/payloads/memory-payload-store.js';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { migrate } from '../dist/src/store/migrate.js';
import { text } from '../bench/lib/genai-batch.mjs';

const server =
  process.env.TAPEDECK_BENCH_DATABASE_URL ??
  process.env.TAPEDECK_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const MESSAGE_BYTES = Number(process.env.BENCH_MESSAGE_BYTES ?? 2048);
const LENGTHS = (process.env.BENCH_CALLS ?? '10,50,100,200').split(',').map(Number);
const THRESHOLD = 256 * 1024;
const T0 = 1_700_000_000_000_000_000n;

const scratch = await openScratchDatabase('conversation_storage', server);
const db = createPgDatabase(scratch.url, { maxConnections: 2, queryTimeoutMillis: 600_000 });
const payloads = createMemoryPayloadStore();
let payloadBytes = 0;
const counting = {
  ...payloads,
  put: async (bytes, mediaType) => {
    payloadBytes += bytes.length;
    return payloads.put(bytes, mediaType);
  },
};
const derive = createDeriveSpans({ payloads: counting }, { payloadThresholdBytes: THRESHOLD });

const hex = (n, width) => n.toString(16).padStart(width, '0');

/** The spans of one run of `calls` calls in `layout`, trace `t`. */
function conversation(layout, calls, t) {
  const traceId = hex(t, 32);
  const history = [];
  const spans = [];
  for (let i = 0; i < calls; i++) {
    history.push({ role: 'user', content: text(MESSAGE_BYTES, t * 100_000 + 2 * i + 1) });
    const answer = { role: 'assistant', content: text(MESSAGE_BYTES, t * 100_000 + 2 * i + 2) };
    const attributes =
      layout === 'genai'
        ? {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.conversation.id': `conv-${t}`,
            'gen_ai.input.messages': JSON.stringify(
              history.map((m) => ({ role: m.role, parts: [{ type: 'text', content: m.content }] })),
            ),
            'gen_ai.output.messages': JSON.stringify([
              { role: 'assistant', parts: [{ type: 'text', content: answer.content }], finish_reason: 'stop' },
            ]),
          }
        : {
            'llm.request.type': 'chat',
            'gen_ai.system': 'openai',
            'gen_ai.request.model': 'gpt-4o',
            'traceloop.association.properties.session_id': `conv-${t}`,
            ...Object.fromEntries(
              history.flatMap((m, j) => [
                [`gen_ai.prompt.${j}.role`, m.role],
                [`gen_ai.prompt.${j}.content`, m.content],
              ]),
            ),
            'gen_ai.completion.0.role': 'assistant',
            'gen_ai.completion.0.content': answer.content,
            'gen_ai.completion.0.finish_reason': 'stop',
          };
    history.push(answer);
    const start = T0 + BigInt(t) * 10_000_000_000_000n + BigInt(i) * 1_000_000_000n;
    spans.push({
      traceId,
      spanId: hex(i + 1, 16),
      parentSpanId: null,
      traceState: '',
      flags: 1,
      name: layout === 'genai' ? 'chat gpt-4o' : 'openai.chat',
      kind: 'client',
      startTimeUnixNano: start,
      endTimeUnixNano: start + 500_000_000n,
      attributes,
      droppedAttributesCount: 0,
      events: [],
      droppedEventsCount: 0,
      links: [],
      droppedLinksCount: 0,
      status: { code: 'unset', message: '' },
      resource: { 'service.name': 'bench-agent' },
      resourceDroppedAttributesCount: 0,
      scope: { name: 'bench', version: '1.0.0', attributes: {} },
      serviceName: 'bench-agent',
    });
  }
  return spans;
}

/** Bytes of a tenant's rows of each table, as stored. */
async function storedBytes(tenant) {
  const sum = async (sql) => Number((await db.query(sql, [tenant]))[0].n ?? 0);
  return {
    steps: await sum('SELECT sum(pg_column_size(t.*)) AS n FROM tapedeck_store.steps t WHERE tenant = $1'),
    messages: await sum('SELECT sum(pg_column_size(t.*)) AS n FROM tapedeck_store.messages t WHERE tenant = $1'),
    // recall's words, part of the rows above: the steps' own and the messages'
    recall: await sum(
      `SELECT (SELECT sum(pg_column_size(words)) FROM tapedeck_store.steps WHERE tenant = $1)
            + (SELECT sum(pg_column_size(words)) FROM tapedeck_store.messages WHERE tenant = $1) AS n`,
    ),
    spans: await sum('SELECT sum(pg_column_size(t.*)) AS n FROM tapedeck_store.spans t WHERE tenant = $1'),
  };
}

const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
try {
  const [{ version }] = await db.query('SELECT version()');
  const [{ compression }] = await db
    .query('SHOW default_toast_compression')
    .then((r) => r.map((x) => ({ compression: x.default_toast_compression })));
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}; load ${os.loadavg()[0].toFixed(1)}; ${version}`);
  await migrate(db);
  const [{ lz4 }] = await db.query(
    "SELECT attcompression = 'l' AS lz4 FROM pg_attribute WHERE attrelid = 'tapedeck_store.spans'::regclass AND attname = 'attributes'",
  );
  console.log(
    `spans.attributes compression: ${lz4 ? 'lz4' : `server default (${compression})`}; messages of ${MESSAGE_BYTES} B`,
  );
  let t = 0;
  for (const layout of ['genai', 'openllmetry']) {
    let base = null;
    for (const calls of LENGTHS) {
      const tenant = `${layout}-${calls}`;
      payloadBytes = 0;
      const spans = conversation(layout, calls, ++t);
      for (let i = 0; i < spans.length; i += 16)
        await ingestSpans(spans.slice(i, i + 16), { tenant }, { db, derive, chunked: null });
      const b = await storedBytes(tenant);
      // recall's words are columns of the steps' and messages' rows, counted there
      const derived = b.steps + b.messages + payloadBytes;
      base ??= { derived, raw: b.spans };
      console.log(
        `${layout} ${String(calls).padStart(3)} calls: derived ${kib(derived)} (steps ${kib(b.steps)}, messages ${kib(b.messages)}, ` +
          `of which recall's words ${kib(b.recall)}; payloads ${kib(payloadBytes)}) = ${(derived / base.derived).toFixed(1)}x the ${LENGTHS[0]}-call run; ` +
          `raw spans ${kib(b.spans)} = ${(b.spans / base.raw).toFixed(1)}x; with raw ${kib(derived + b.spans)}`,
      );
    }
  }
  console.log(
    `load average after: ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await db.close();
  await scratch.cleanup();
}
