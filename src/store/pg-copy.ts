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

// The generators and callbacks below are module functions, not closures made per COPY
// (docs/architecture.md, "Decisions and why").

export async function copyRowsWith(
  client: pg.PoolClient,
  table: string,
  columns: readonly CopyColumn[],
  rows: RowSource,
): Promise<number> {
  return copyTuplesWith(client, table, columns, encoded(rows, new BinaryCopyWriter(columns, { framed: false })));
}

/** The rows' tuples, a chunk at a time. */
async function* encoded(rows: RowSource, writer: BinaryCopyWriter): AsyncGenerator<Buffer> {
  for await (const row of rows) {
    writer.row(row);
    if (writer.pendingBytes >= FLUSH_BYTES) yield* writer.take();
  }
  yield* writer.take(true);
}

/** COPY of tuples already encoded (BinaryCopyWriter, unframed, for these columns). */
export async function copyTuplesWith(
  client: pg.PoolClient,
  table: string,
  columns: readonly CopyColumn[],
  tuples: TupleSource,
): Promise<number> {
  const copy = client.query(copyFrom(`COPY ${table} (${columns.map(nameOf).join(', ')}) FROM STDIN (FORMAT binary)`));
  await pipeline(Readable.from(framed(tuples), { objectMode: false }), copy);
  return copy.rowCount;
}

const nameOf = (c: CopyColumn) => c.name;

/** The tuples between the format's header and trailer. */
async function* framed(tuples: TupleSource): AsyncGenerator<Uint8Array> {
  yield COPY_HEADER;
  for await (const t of tuples) if (t.length > 0) yield t;
  yield COPY_TRAILER;
}
