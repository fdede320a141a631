/**
 * @module recall/trace-words
 * Recall's index (0004_recall_by_trace.sql): the words of each trace's steps, in
 * tapedeck_store.trace_words, GIN-indexed. Each step keeps its own words in steps.search (not
 * indexed) for the exact test; query.ts takes the traces whose rows hold every word, then the
 * steps among them that do themselves.
 *
 * Why by trace: an agent resends the conversation on every model call, so a run's steps
 * repeat most of each other's words, and one index entry per word per step was most of
 * ingest's database work. Each write of a trace's steps (an ingest request, late log records,
 * a reindex batch) adds one row with the union of those steps' words; a trace's rows are
 * therefore always a superset of its steps' words. A step re-derived with fewer words leaves
 * words behind that only make its trace a candidate, never a match; reindex replaces a
 * trace's rows with the union of its steps as they are now. Each row also counts the steps its
 * words came from, so the rows a query finds bound its matches from above (query.ts).
 *
 * A row holds at most MAX_INDEX_BYTES of lexemes, each counted at 3 bytes per UTF-16 unit (its
 * UTF-8 size at most) plus 4 (a tsvector holds at most 1 MB): a trace whose steps use more
 * words gets several rows.
 */
import type { StoredStep } from '../tapes/step-rows.js';
import { copyColumnsOf, insertRows, type Column } from '../tapes/bulk-insert.js';
import { hexToBytes } from '../tapes/span-rows.js';
import type { Queryable } from '../store/database.js';
import { MAX_INDEX_BYTES } from './tokenize.js';

const columns: readonly Column[] = [
  { name: 'tenant' },
  { name: 'trace_id', cast: 'bytea' },
  // Stored as given, bypassing the text-search parser, as steps.search (0003_recall.sql).
  { name: 'words', expr: (p) => `array_to_tsvector(${p}::text[])`, copy: 'tsvector' },
  { name: 'steps', cast: 'integer' },
];
const copyColumns = copyColumnsOf(columns);

interface Row {
  traceId: string;
  lexemes: Set<string>;
  bytes: number;
  /** steps with words in this row (a step whose words fill two rows counts in both) */
  steps: number;
}

/** The words of the steps written in one transaction, gathered by trace. */
export class TraceWords {
  private readonly open = new Map<string, Row>();
  private readonly full: Row[] = [];

  constructor(private readonly maxBytes = MAX_INDEX_BYTES) {}

  /** The words of these steps (null: a span that is no step). */
  static of(steps: Iterable<Pick<StoredStep, 'traceId' | 'search'> | null>): TraceWords {
    const words = new TraceWords();
    for (const step of steps) if (step) words.add(step);
    return words;
  }

  add(step: Pick<StoredStep, 'traceId' | 'search'>): void {
    if (!step.search || step.search.length === 0) return;
    let row = this.open.get(step.traceId);
    if (row) row.steps++;
    for (const lexeme of step.search) {
      if (row?.lexemes.has(lexeme)) continue;
      const size = lexeme.length * 3 + 4; // at most its UTF-8 bytes, without measuring them
      if (!row || row.bytes + size > this.maxBytes) {
        if (row) this.full.push(row);
        row = { traceId: step.traceId, lexemes: new Set(), bytes: 0, steps: 1 };
        this.open.set(step.traceId, row);
      }
      row.lexemes.add(lexeme);
      row.bytes += size;
    }
  }

  get size(): number {
    return this.full.length + this.open.size;
  }

  rows(tenant: string): unknown[][] {
    return [...this.full, ...this.open.values()].map((r) => [tenant, hexToBytes(r.traceId), [...r.lexemes], r.steps]);
  }
}

/** Adds the gathered rows: binary COPY where the adapter has it, a multi-row INSERT otherwise. */
export async function writeTraceWords(tx: Queryable, tenant: string, words: TraceWords): Promise<void> {
  if (words.size === 0) return;
  const rows = words.rows(tenant);
  if (tx.copyRows) await tx.copyRows('tapedeck_store.trace_words', copyColumns, rows);
  else await insertRows(tx, 'tapedeck_store.trace_words', columns, rows);
}

/** Before a trace's words are written anew from all its steps (reindex). */
export async function deleteTraceWords(tx: Queryable, tenant: string, traceIds: readonly Uint8Array[]): Promise<void> {
  if (traceIds.length === 0) return;
  await tx.query('DELETE FROM tapedeck_store.trace_words WHERE tenant = $1 AND trace_id = ANY($2::bytea[])', [tenant, traceIds]);
}
