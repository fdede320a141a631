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
import { BinaryCopyWriter, COPY_HEADER, COPY_TRAILER, type CopyColumn } from './copy-binary.js';
import type { RowSource, TupleSource } from './database.js';

/** Chunks are handed to the socket once this much is buffered. */
const FLUSH_BYTES = 256 * 1024;

export async function copyRowsWith(
  client: pg.PoolClient,
  table: string,
  columns: readonly CopyColumn[],
  rows: RowSource,
): Promise<number> {
  const writer = new BinaryCopyWriter(columns, { framed: false });
  async function* tuples(): AsyncGenerator<Buffer> {
    for await (const row of rows) {
      writer.row(row);
      if (writer.pendingBytes >= FLUSH_BYTES) yield* writer.take();
    }
    yield* writer.take(true);
  }
  return copyTuplesWith(client, table, columns, tuples());
}

/** COPY of tuples already encoded (BinaryCopyWriter, unframed, for these columns). */
export async function copyTuplesWith(
  client: pg.PoolClient,
  table: string,
  columns: readonly CopyColumn[],
  tuples: TupleSource,
): Promise<number> {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    yield COPY_HEADER;
    for await (const t of tuples) if (t.length > 0) yield t;
    yield COPY_TRAILER;
  }
  const copy = client.query(
    copyFrom(`COPY ${table} (${columns.map((c) => c.name).join(', ')}) FROM STDIN (FORMAT binary)`),
  );
  await pipeline(Readable.from(chunks(), { objectMode: false }), copy);
  return copy.rowCount;
}
