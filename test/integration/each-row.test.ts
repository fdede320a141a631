/**
 * eachRow hands a statement's rows over in order on both adapters, with the adapter's types;
 * on PostgreSQL as the driver reads them, none kept: rows sent before a statement fails have
 * been handed over when it rejects, and the statement resolves with no rows of its own. A
 * row the caller cannot take rejects the statement, and leaves the connection usable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eachRow } from '../../src/store/database.js';
import { databaseKinds, createTestDatabase, type TestDatabase } from '../helpers/databases.js';

const SERIES = 'SELECT g::int AS n, (g * 1000000000000)::bigint AS big FROM generate_series(1, $1::int) AS g';
// rows 1 and 2, then division by zero
const FAILS_AT_THREE = 'SELECT g::int AS n, (10 / (3 - g))::int AS q FROM generate_series(1, 5) AS g';

describe.each(databaseKinds)('eachRow on %s', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind, { migrated: false });
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('hands every row over in order, int8 as bigint, pooled, signalled and in a transaction', async () => {
    const read = async (run: (onRow: (r: { n: number; big: bigint }) => void) => Promise<void>) => {
      const rows: [number, bigint][] = [];
      await run((r) => rows.push([r.n, r.big]));
      return rows;
    };
    const expected = Array.from({ length: 500 }, (_, i) => [i + 1, BigInt(i + 1) * 1_000_000_000_000n]);
    const signal = new AbortController().signal;
    expect(await read((onRow) => eachRow(t.db, SERIES, [500], onRow))).toEqual(expected);
    expect(await read((onRow) => eachRow(t.db, SERIES, [500], onRow, { signal }))).toEqual(expected);
    expect(await t.db.transaction((tx) => read((onRow) => eachRow(tx, SERIES, [500], onRow)))).toEqual(expected);
    expect(await t.db.transaction((tx) => read((onRow) => eachRow(tx, SERIES, [500], onRow, { signal })))).toEqual(
      expected,
    );
  });

  it('rejects with the error of a row the caller cannot take, and the next statement runs', async () => {
    const seen: number[] = [];
    await expect(
      eachRow<{ n: number }>(t.db, SERIES, [50], (r) => {
        seen.push(r.n);
        if (r.n === 7) throw new Error('row 7 is not wanted');
      }),
    ).rejects.toThrow('row 7 is not wanted');
    expect(seen.slice(0, 7)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const after: number[] = [];
    await eachRow<{ n: number }>(t.db, SERIES, [3], (r) => after.push(r.n));
    expect(after).toEqual([1, 2, 3]);
  });

  it.skipIf(kind !== 'postgres')('on PostgreSQL, hands rows over as they are read and keeps none', async () => {
    const seen: number[] = [];
    await expect(eachRow<{ n: number }>(t.db, FAILS_AT_THREE, [], (r) => seen.push(r.n))).rejects.toThrow(
      /division by zero/,
    );
    // a result read whole would have handed over nothing before failing
    expect(seen).toEqual([1, 2]);
    const handed: number[] = [];
    const kept = await t.db.query<{ n: number }>(SERIES, [5], { onRow: (r: { n: number }) => handed.push(r.n) });
    expect({ kept, handed }).toEqual({ kept: [], handed: [1, 2, 3, 4, 5] });
  });
});
