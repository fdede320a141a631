/**
 * @module store/pg-row-stream
 * A statement whose rows are handed over one by one as node-postgres reads them, none kept
 * (QueryOptions.onRow): the driver's row objects then die young, where a result held whole
 * keeps every one alive, and copied by each collection, until the caller is done with it.
 */
import pg from 'pg';

export function streamRows(
  client: pg.ClientBase,
  sql: string,
  params: readonly unknown[] | undefined,
  onRow: (row: never) => void,
): Promise<never[]> {
  return new Promise((resolve, reject) => {
    let failed: { error: unknown } | undefined;
    // A callback, not the 'error' and 'end' events: the pool's query_timeout puts a callback
    // of its own on every query, after which the driver reports only through one.
    const query = new pg.Query(sql, params as unknown[] | undefined, (error: Error | null | undefined) => {
      if (error) reject(error);
      else if (failed) reject(failed.error);
      else resolve([]);
    });
    query.on('row', (row: unknown, result?: { rows: unknown[] }) => {
      // With a callback the driver keeps each row after this: the one before goes.
      if (result) result.rows.length = 0;
      if (failed) return;
      // thrown here, it would unwind through the driver's reading of the connection
      try {
        onRow(row as never);
      } catch (error) {
        failed = { error };
      }
    });
    client.query(query);
  });
}
