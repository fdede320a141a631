/**
 * @module recall/trace-words
 * Recall's index, tapedeck_store.trace_words (docs/architecture.md "Recall's index"): rows of
 * up to MAX_ROW_STEPS steps written in one transaction and indexed together (one backlog row,
 * backlog.ts), each holding `words`, the union of their word hashes (word-hash.ts), ascending
 * or in first-use order (`sorted`); `masks`, per word, the steps holding it (bit i for the
 * i-th step); `trace_ids` and `span_ids` in bit order; and `steps`. A step's words are never
 * split between rows, so "the steps of a row that hold every word" is exact (query.ts).
 *
 * Why rows of many steps: one GIN entry per word per row is most of what the index costs to
 * write, and steps written together share most of their words (an agent resends its
 * conversation; any two texts share their common words). Steps are taken trace by trace, so a
 * row holds one trace's steps or several small traces'. A step written again gets a new row;
 * its old row keeps matching until `tapedeck reindex` drops rows older than its start.
 */
import { copyColumnsOf, insertRows, type Column } from '../store/bulk-insert.js';
import type { Database, Queryable } from '../store/database.js';
import { ascendingWords, indexOfWord, WordTable, wordIds } from './word-hash.js';

/** Steps per row: one bit each in a bigint mask. */
export const MAX_ROW_STEPS = 64;
/**
 * Words a row may hold: a step joins a row only if the row's words and the step's new ones
 * stay within it (a step of more, at most tokenize.ts MAX_STEP_WORDS, has a row of its own).
 * A query tests each row that holds its words by looking each word up in the row's words, so
 * the larger the rows, the more of them hold a common word and the longer each look-up
 * (docs/benchmarks.md, "ROW_WORDS").
 */
export const ROW_WORDS = 1024;
/**
 * Rows of at most this many steps are written with their words in ascending order, because
 * the GIN index sorts every array it takes and one that comes sorted costs it least. Sorted,
 * a row's masks compress about half as well (first-use order keeps alike the masks of words
 * a step brought in), which for large rows costs more table and slower matching than the
 * index saves, so a larger row keeps first-use order. The cut lies between two measured cases
 * (docs/benchmarks.md, "Sorted rows"), not tuned within them. Queries find a word in a sorted
 * row by binary search (query.ts).
 */
export const SORTED_ROW_STEPS = 16;

const bigints = (v: unknown) => wordIds(v as Int32Array);
const columns: readonly Column[] = [
  { name: 'tenant' },
  { name: 'words', cast: 'bigint[]', copy: 'int8[]', param: bigints },
  { name: 'masks', cast: 'bigint[]', copy: 'int8[]', param: bigints },
  { name: 'trace_ids', cast: 'bytea' },
  { name: 'span_ids', cast: 'bytea' },
  { name: 'steps', cast: 'integer' },
  { name: 'sorted', cast: 'boolean' },
];
/** trace_words' columns for binary COPY (copyRows, copyTuples) */
export const traceWordCopyColumns = copyColumnsOf(columns);

/** A step's words (tokenize.ts indexWords: hash lanes), as a row takes them. */
export interface StepWords {
  traceId: string;
  spanId: string;
  words: Int32Array;
}

/**
 * The row being filled; take() hands it over and starts the next, reusing its word table so
 * that a row's table does not grow from scratch.
 */
class RowBuilder {
  private readonly words = new WordTable();
  /** per word, its mask as two halves: bits 32-63, then bits 0-31 */
  private masks = new Int32Array(512);
  private traceIds: Uint8Array[] = [];
  private spanIds: Uint8Array[] = [];
  /**
   * A row whose first step alone passes ROW_WORDS: its words, sorted, and their masks by the
   * same positions. No other step adds words to it, so it needs no table, and a step joins
   * only if the row holds every word of it (a binary search each).
   */
  private whole: { lanes: Int32Array; masks: Int32Array } | null = null;

  get steps(): number {
    return this.spanIds.length;
  }

  /** Whether a step of these words (lanes) may join without passing a cap. */
  fits(lanes: Int32Array): boolean {
    if (this.steps === 0) return true;
    if (this.steps === MAX_ROW_STEPS) return false;
    if (this.whole) {
      const words = this.whole.lanes;
      for (let i = 0; i < lanes.length; i += 2) if (indexOfWord(words, lanes[i], lanes[i + 1]) < 0) return false;
      return true;
    }
    if (this.words.size + (lanes.length >> 1) <= ROW_WORDS) return true;
    // Only the words the row does not hold yet count: a trace's steps repeat each other's.
    let fresh = 0;
    for (let i = 0; i < lanes.length; i += 2) {
      if (!this.words.has(lanes[i], lanes[i + 1]) && this.words.size + ++fresh > ROW_WORDS) return false;
    }
    return true;
  }

  add(step: StepWords): void {
    const bit = this.steps;
    const lanes = step.words;
    this.traceIds.push(Buffer.from(step.traceId, 'hex'));
    this.spanIds.push(Buffer.from(step.spanId, 'hex'));
    const half = bit < 32 ? 1 : 0;
    const flag = 1 << (bit & 31);
    if (bit === 0 && lanes.length >> 1 > ROW_WORDS) {
      // A step's words are distinct (tokenize.ts): they are the row's words as they are, each
      // with bit 0 (in the low half).
      const masks = new Int32Array(lanes.length);
      for (let i = 1; i < masks.length; i += 2) masks[i] = 1;
      this.whole = { lanes: ascendingWords(lanes, lanes.length >> 1).lanes, masks };
      return;
    }
    if (this.whole) {
      const { lanes: words, masks } = this.whole;
      for (let i = 0; i < lanes.length; i += 2) masks[indexOfWord(words, lanes[i], lanes[i + 1]) * 2 + half] |= flag;
      return;
    }
    for (let i = 0; i < lanes.length; i += 2) {
      let n = this.words.add(lanes[i], lanes[i + 1]);
      if (n < 0) {
        n = ~n;
        if (n * 2 >= this.masks.length) {
          const grown = new Int32Array(this.masks.length * 2);
          grown.set(this.masks);
          this.masks = grown;
        }
      }
      this.masks[n * 2 + half] |= flag;
    }
  }

  /**
   * The row's values, its words with their masks, in ascending order (ascendingWords) in a
   * row of one step's words or of at most SORTED_ROW_STEPS steps; then empties it.
   */
  take(tenant: string): unknown[] {
    const steps = this.steps;
    const sorted = this.whole !== null || steps <= SORTED_ROW_STEPS;
    let lanes: Int32Array;
    let masks: Int32Array;
    if (this.whole) {
      ({ lanes, masks } = this.whole);
      this.whole = null;
    } else {
      ({ lanes, masks } = sorted
        ? this.ascending()
        : { lanes: this.words.lanes(), masks: this.masks.slice(0, 2 * this.words.size) });
      this.masks.fill(0, 0, lanes.length);
      this.words.clear();
    }
    const values = [tenant, lanes, masks, Buffer.concat(this.traceIds), Buffer.concat(this.spanIds), steps, sorted];
    this.traceIds = [];
    this.spanIds = [];
    return values;
  }

  /** The table's words in ascending order, each with its mask. */
  private ascending(): { lanes: Int32Array; masks: Int32Array } {
    const { lanes, numbers } = this.words.ascending();
    const masks = new Int32Array(lanes.length);
    for (let i = 0; i < numbers.length; i++) {
      masks[2 * i] = this.masks[2 * numbers[i]];
      masks[2 * i + 1] = this.masks[2 * numbers[i] + 1];
    }
    return { lanes, masks };
  }
}

/** The words of the steps indexed together (one backlog row), kept by trace until rows() packs them. */
export class TraceWords {
  private readonly byTrace = new Map<string, StepWords[]>();
  private count = 0;

  /** The words of these steps (null: a span that is no step). */
  static of(steps: Iterable<StepWords | null>): TraceWords {
    const words = new TraceWords();
    for (const step of steps) if (step) words.add(step);
    return words;
  }

  /**
   * Adds a step; one without words (nothing recorded to search) is left out. Its words are
   * kept as they are, not copied, until rows(): the array must not change in the meantime.
   */
  add(step: StepWords): void {
    const lanes = step.words;
    if (lanes.length === 0) return;
    const steps = this.byTrace.get(step.traceId);
    const kept = { traceId: step.traceId, spanId: step.spanId, words: lanes };
    if (steps) steps.push(kept);
    else this.byTrace.set(step.traceId, [kept]);
    this.count++;
  }

  /** Steps with words. */
  get size(): number {
    return this.count;
  }

  /** The rows: the steps trace by trace (traces in the order they came), each row as full as the caps allow. */
  rows(tenant: string): unknown[][] {
    const rows: unknown[][] = [];
    const row = new RowBuilder();
    for (const steps of this.byTrace.values()) {
      for (const step of steps) {
        if (!row.fits(step.words)) rows.push(row.take(tenant));
        row.add(step);
      }
    }
    if (row.steps > 0) rows.push(row.take(tenant));
    return rows;
  }
}

/** Adds the gathered rows: binary COPY where the adapter has it, a multi-row INSERT otherwise. */
export async function writeTraceWords(tx: Queryable, tenant: string, words: TraceWords): Promise<void> {
  if (words.size === 0) return;
  const rows = words.rows(tenant);
  if (tx.copyRows) await tx.copyRows('tapedeck_store.trace_words', traceWordCopyColumns, rows);
  else await insertRows(tx, 'tapedeck_store.trace_words', columns, rows);
}

/**
 * The last row written so far (in a transaction of its own): the rows up to it are those a
 * complete reindex replaces. The SHARE lock waits for the transactions writing rows to end,
 * so none of them commits a row numbered below the answer later.
 */
export async function lastTraceWordsRow(db: Database): Promise<bigint> {
  return db.transaction(async (tx) => {
    await tx.query('LOCK TABLE tapedeck_store.trace_words IN SHARE MODE');
    // The identity's sequence rather than max(row_id): no scan of the table under the lock.
    const [row] = await tx.query<{ last: bigint | number | string | null }>(
      `SELECT pg_sequence_last_value(pg_get_serial_sequence('tapedeck_store.trace_words', 'row_id')) AS last`,
    );
    return BigInt(row.last ?? 0);
  });
}

/** Blocks of trace_words (8 KiB each) that one DELETE of deleteTraceWordsUpTo reads: 8 MiB. */
export const DELETE_BLOCKS = 1024;

/**
 * Drops the rows up to `last` (every trace's words have been written anew since): block range
 * by block range, one statement each (a TID range scan), so that a large index is not emptied
 * in one transaction, with its WAL and its hold on vacuum. Rows are never updated, so a row up
 * to `last` lies in the blocks the table had, unless something rewrote the table meanwhile
 * (VACUUM FULL, CLUSTER: a new file), when one statement over the whole table takes the rest.
 * Resolves with the rows each way deleted.
 */
export async function deleteTraceWordsUpTo(
  db: Queryable,
  last: bigint,
  blocksPerStatement = DELETE_BLOCKS,
): Promise<{ byRange: number; afterwards: number }> {
  const fileOf = async (): Promise<string> => {
    const [row] = await db.query<{ node: unknown }>(
      `SELECT pg_relation_filenode('tapedeck_store.trace_words')::text AS node`,
    );
    return String(row.node);
  };
  const file = await fileOf();
  const [{ blocks }] = await db.query<{ blocks: bigint | number | string }>(
    `SELECT pg_relation_size('tapedeck_store.trace_words') / current_setting('block_size')::bigint AS blocks`,
  );
  const deleted = async (where: string, params: unknown[]): Promise<number> => {
    const [row] = await db.query<{ n: bigint | number }>(
      `WITH d AS (DELETE FROM tapedeck_store.trace_words WHERE ${where} RETURNING 1) SELECT count(*) AS n FROM d`,
      params,
    );
    return Number(row.n);
  };
  const step = BigInt(Math.max(1, Math.floor(blocksPerStatement)));
  let byRange = 0;
  for (let from = 0n; from < BigInt(blocks); from += step) {
    byRange += await deleted('ctid >= $1::tid AND ctid < $2::tid AND row_id <= $3', [
      `(${from},0)`,
      `(${from + step},0)`,
      last.toString(),
    ]);
  }
  const afterwards = (await fileOf()) === file ? 0 : await deleted('row_id <= $1', [last.toString()]);
  return { byRange, afterwards };
}
