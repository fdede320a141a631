/**
 * @module recall/trace-words
 * Recall's index (0006_recall_word_hashes.sql): tapedeck_store.trace_words, rows of a trace's
 * steps and their words, GIN-indexed on the words. query.ts takes the rows that hold every
 * word of a query, then, in each, the steps that hold them all.
 *
 * Why by trace: an agent resends the conversation on every model call, so a run's steps
 * repeat most of each other's words; one index entry per word per step was most of ingest's
 * database work, and so was storing each step's own words beside it. A row holds up to
 * MAX_ROW_STEPS steps of one trace written together (an ingest request, late log records, a
 * reindex batch): `words`, the union of their words (hashes, word-hash.ts) in first-use order;
 * `masks`, per word, the steps holding it (bit i for the i-th step); `span_ids`, the steps'
 * span ids, 8 bytes each, in bit order; `steps`, their number. A step's words are never split
 * between rows, so "the steps of a row that hold every word" is exact.
 *
 * A step written again (late log records, a resent span) is in a new row too; its old row
 * keeps the words it had, which a step re-derived with fewer words keeps matching until
 * `tapedeck reindex` replaces the trace's rows with its steps as they are now.
 */
import type { StoredStep } from '../tapes/step-rows.js';
import { copyColumnsOf, insertRows, type Column } from '../tapes/bulk-insert.js';
import { hexToBytes } from '../tapes/span-rows.js';
import type { Queryable } from '../store/database.js';
import { MAX_STEP_WORDS } from './tokenize.js';
import { WordTable, wordIds } from './word-hash.js';

/** Steps per row: one bit each in a bigint mask. */
export const MAX_ROW_STEPS = 64;
/** Words per row; a step (at most MAX_STEP_WORDS) that would pass it starts a new row. */
export const MAX_ROW_WORDS = 2 * MAX_STEP_WORDS;

const bigints = (v: unknown) => wordIds(v as Int32Array);
const columns: readonly Column[] = [
  { name: 'tenant' },
  { name: 'trace_id', cast: 'bytea' },
  { name: 'words', cast: 'bigint[]', copy: 'int8[]', param: bigints },
  { name: 'masks', cast: 'bigint[]', copy: 'int8[]', param: bigints },
  { name: 'span_ids', cast: 'bytea' },
  { name: 'steps', cast: 'integer' },
];
/** trace_words' columns for binary COPY (copyRows, copyTuples) */
export const traceWordCopyColumns = copyColumnsOf(columns);

class Row {
  readonly words = new WordTable();
  /** per word, its mask as two halves: bits 32-63, then bits 0-31 */
  masks = new Int32Array(512);
  readonly spanIds: Uint8Array[] = [];

  constructor(readonly traceId: string) {}

  get steps(): number {
    return this.spanIds.length;
  }

  /** Whether a step of `words` distinct words may join without passing a cap. */
  fits(words: number): boolean {
    return this.steps < MAX_ROW_STEPS && this.words.size + words <= MAX_ROW_WORDS;
  }

  add(spanId: string, lanes: Int32Array): void {
    const bit = this.steps;
    this.spanIds.push(hexToBytes(spanId));
    const half = bit < 32 ? 1 : 0;
    const flag = 1 << (bit & 31);
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

  values(tenant: string): unknown[] {
    return [tenant, hexToBytes(this.traceId), this.words.lanes(), this.masks.slice(0, this.words.size * 2), Buffer.concat(this.spanIds), this.steps];
  }
}

/** The words of the steps written in one transaction, gathered by trace. */
export class TraceWords {
  private readonly open = new Map<string, Row>();
  private readonly full: Row[] = [];

  /** The words of these steps (null: a span that is no step). */
  static of(steps: Iterable<Pick<StoredStep, 'traceId' | 'spanId' | 'words'> | null>): TraceWords {
    const words = new TraceWords();
    for (const step of steps) if (step) words.add(step);
    return words;
  }

  /** Adds a step; one without words (nothing recorded to search) is left out. */
  add(step: Pick<StoredStep, 'traceId' | 'spanId' | 'words'>): void {
    const lanes = step.words;
    if (!lanes || lanes.length === 0) return;
    let row = this.open.get(step.traceId);
    if (!row || !row.fits(lanes.length >> 1)) {
      if (row) this.full.push(row);
      row = new Row(step.traceId);
      this.open.set(step.traceId, row);
    }
    row.add(step.spanId, lanes);
  }

  get size(): number {
    return this.full.length + this.open.size;
  }

  rows(tenant: string): unknown[][] {
    return [...this.full, ...this.open.values()].map((r) => r.values(tenant));
  }
}

/** Adds the gathered rows: binary COPY where the adapter has it, a multi-row INSERT otherwise. */
export async function writeTraceWords(tx: Queryable, tenant: string, words: TraceWords): Promise<void> {
  if (words.size === 0) return;
  const rows = words.rows(tenant);
  if (tx.copyRows) await tx.copyRows('tapedeck_store.trace_words', traceWordCopyColumns, rows);
  else await insertRows(tx, 'tapedeck_store.trace_words', columns, rows);
}

/** Before a trace's words are written anew from all its steps (reindex). */
export async function deleteTraceWords(tx: Queryable, tenant: string, traceIds: readonly Uint8Array[]): Promise<void> {
  if (traceIds.length === 0) return;
  await tx.query('DELETE FROM tapedeck_store.trace_words WHERE tenant = $1 AND trace_id = ANY($2::bytea[])', [tenant, traceIds]);
}
