// The raw baseline: decode the request bodies with tapedeck's decoder, SHA-256 each span's
// content (attributes and events, where the prompts are), and COPY (binary) the very rows
// tapedeck would write for those spans (spanToRow) into bench_raw.spans, created LIKE
// tapedeck_store.spans INCLUDING ALL (same columns, primary key, indexes, defaults and column
// compression). One transaction per request (COPY in autocommit), one connection per worker.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { decodeTraceRequest } from '../../dist/src/otlp/decode.js';
import { AttributeJson } from '../../dist/src/tapes/attribute-json.js';
import { spanColumns, spanToRow } from '../../dist/src/tapes/span-rows.js';
import { createBinaryCopyEncoder } from './copy-binary.mjs';

const TABLE = 'bench_raw.spans';
const CHUNK_BYTES = 256 * 1024;
const typeOf = { bytea: 'bytea', bigint: 'int8', integer: 'int4', jsonb: 'jsonb' };

/** A jsonb value of spanToRow (AttributeJson) as its text; anything else as it is. */
const asText = (v) => (v instanceof AttributeJson ? String(v) : v);

export async function createRawIngest(databaseUrl, workers) {
  const clients = [];
  for (let i = 0; i < workers; i++) {
    const c = new pg.Client({ connectionString: databaseUrl, application_name: 'tapedeck-bench-raw' });
    await c.connect();
    clients.push(c);
  }
  const backendPids = [];
  for (const c of clients) backendPids.push((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  await clients[0].query(`CREATE SCHEMA IF NOT EXISTS bench_raw;
    CREATE TABLE IF NOT EXISTS ${TABLE} (LIKE tapedeck_store.spans INCLUDING ALL)`);
  const encoder = createBinaryCopyEncoder(spanColumns.map((c) => typeOf[c.cast] ?? 'text'));
  const copySql = `COPY ${TABLE} (${spanColumns.map((c) => c.name).join(', ')}) FROM STDIN (FORMAT binary)`;

  function* chunks(spans) {
    yield encoder.header;
    let pending = [];
    let size = 0;
    for (const s of spans) {
      // the JSON columns as text, as a plain receiver builds them (tapedeck's own COPY writes
      // them into its buffer instead: AttributeJson, src/tapes/attribute-json.ts)
      const row = spanToRow('', s, null, null).map(asText);
      createHash('sha256').update(row[12]).update(row[13]).digest();
      const bytes = encoder.row(row);
      pending.push(bytes);
      size += bytes.length;
      if (size >= CHUNK_BYTES) {
        yield Buffer.concat(pending, size);
        pending = [];
        size = 0;
      }
    }
    pending.push(encoder.trailer);
    yield Buffer.concat(pending);
  }

  async function ingest(client, body) {
    const decoded = decodeTraceRequest(body, 'protobuf');
    await pipeline(Readable.from(chunks(decoded.spans), { objectMode: false }), client.query(copyFrom(copySql)));
    return decoded.spans.length;
  }

  return {
    /** the PostgreSQL backends doing the COPYs, for CPU accounting */
    backendPids,
    async run({ source, seconds, minRequests = 1 }) {
      const started = performance.now();
      const deadline = started + seconds * 1000;
      let spans = 0;
      let bytes = 0;
      await Promise.all(
        clients.map(async (client) => {
          let body;
          for (let sent = 0; sent < minRequests || performance.now() < deadline; sent++) {
            body = source.next(body);
            // read the count before adding: `spans += await …` would add to a value read
            // before the await, losing the other workers' counts meanwhile
            const stored = await ingest(client, body);
            spans += stored;
            bytes += body.length;
          }
        }),
      );
      return { spans, bytes, elapsed: (performance.now() - started) / 1000 };
    },
    /** Each of `bodies` once, the connections taking the next as they finish one. */
    async runAll(bodies) {
      const started = performance.now();
      let next = 0;
      let spans = 0;
      await Promise.all(
        clients.map(async (client) => {
          while (next < bodies.length) {
            const stored = await ingest(client, bodies[next++]);
            spans += stored;
          }
        }),
      );
      return { spans, elapsed: (performance.now() - started) / 1000 };
    },
    async close() {
      await Promise.all(clients.map((c) => c.end().catch(() => {})));
    },
  };
}
