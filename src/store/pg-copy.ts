/**
 * @module store/pg-copy
 * COPY ... FROM STDIN (FORMAT binary) over a `pg` client, through pg-copy-streams. Rows are
 * encoded as they are pulled from the source and sent in chunks with the socket's
 * backpressure, so memory holds a chunk or two rather than the whole batch. When the source
 * throws, the COPY is aborted (CopyFail) and the error propagates; the transaction around it
 * then rolls back as for any failed statement.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { BinaryCopyWriter, type CopyColumn } from './copy-binary.js';
import type { RowSource } from './database.js';

/** Chunks are handed to the socket once this much is buffered. */
const FLUSH_BYTES = 256 * 1024;

export async function copyRowsWith(client: pg.PoolClient, table: string, columns: readonly CopyColumn[], rows: RowSource): Promise<number> {
  const writer = new BinaryCopyWriter(columns);
  async function* chunks(): AsyncGenerator<Buffer> {
    for await (const row of rows) {
      writer.row(row);
      if (writer.pendingBytes >= FLUSH_BYTES) yield* writer.take();
    }
    yield* writer.take(true);
  }
  const copy = client.query(copyFrom(`COPY ${table} (${columns.map((c) => c.name).join(', ')}) FROM STDIN (FORMAT binary)`));
  await pipeline(Readable.from(chunks(), { objectMode: false }), copy);
  return copy.rowCount;
}
