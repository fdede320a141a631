/**
 * @module store/database
 * The one small port every store is written against. Two adapters implement it: PGlite
 * (embedded, the zero-setup default) and PostgreSQL through `pg`. Both run the same SQL.
 *
 * Conventions both adapters guarantee, so callers never branch on the adapter:
 * - int8 columns come back as bigint (nanosecond times must stay exact);
 * - json/jsonb come back parsed; bytea comes back as a Uint8Array (a Buffer under pg);
 * - errors that a retry may cure are wrapped in DatabaseUnavailableError;
 * - a query given a signal rejects with the signal's reason once it aborts, and its
 *   statement does not keep the database busy after that (QueryOptions).
 */
import type { CopyColumn } from './copy-binary.js';

export type { CopyColumn, CopyType } from './copy-binary.js';

/**
 * A request's hold on one statement. When `signal` aborts (the request's deadline passed, or
 * it was answered), the statement is stopped: PostgreSQL cancels it on the server; PGlite
 * never starts one whose signal aborted while it waited its turn, and stops one running in a
 * data directory by replacing the worker thread it runs in (pglite-thread.ts).
 */
export interface QueryOptions {
  signal?: AbortSignal;
  /**
   * The statement's text is one of a fixed few (values only in parameters): PostgreSQL
   * prepares it once per connection and may then run it on a plan made without the values,
   * sparing it the parse and the planning on every call (docs/architecture.md, "Database
   * adapters"). PGlite runs it as any other.
   */
  prepared?: boolean;
}

/** The options of a statement marked `prepared` and nothing else. */
export const PREPARED: QueryOptions = Object.freeze({ prepared: true });

export interface Queryable {
  query<Row = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<Row[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * COPY rows into a table (binary format), pulling them from `rows` as the server takes
   * them, so a large batch streams instead of sitting in memory as one statement. Resolves
   * with the number of rows copied. COPY has no ON CONFLICT: the caller makes sure the rows
   * are new. Only the PostgreSQL server adapter has it (PGlite has no COPY FROM STDIN over
   * its query API); callers fall back to INSERT when it is absent.
   */
  copyRows?(table: string, columns: readonly CopyColumn[], rows: RowSource): Promise<number>;
  /**
   * copyRows for rows encoded already, by BinaryCopyWriter (unframed) for the same columns:
   * chunks of whole tuples, as a worker thread hands them over. The adapters that have
   * copyRows have it.
   */
  copyTuples?(table: string, columns: readonly CopyColumn[], tuples: TupleSource): Promise<number>;
}

/** Rows for copyRows, values in column order; may be produced lazily. */
export type RowSource = Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>;

/** Chunks of encoded tuples for copyTuples, each holding whole tuples. */
export type TupleSource = Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs fn in one transaction: commit when it resolves, roll back when it throws. `untimed`:
   * no query or statement timeout applies (migrations, whose rewrites of large tables take
   * as long as they take); on PostgreSQL it runs on a connection of its own.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: { untimed?: boolean }): Promise<T>;
  /** Cheap liveness probe for /readyz. */
  ping(): Promise<void>;
  /** The connection pool's state (metrics); absent where there is no pool (PGlite). */
  poolUsage?(): PoolUsage;
  close(): Promise<void>;
}

export interface PoolUsage {
  /** connections the pool may open */
  max: number;
  /** connections open: in use or idle */
  open: number;
  idle: number;
  /** callers waiting for a connection */
  waiting: number;
}

/** The database could not be reached or refused for a transient reason; retrying may succeed. */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * SQLSTATE classes a retry can cure: connection exceptions (08), serialization failure
 * (40001), deadlock (40P01), insufficient resources (53), operator intervention such as
 * admin shutdown (57P0x).
 */
export function isTransientSqlState(code: unknown): boolean {
  if (typeof code !== 'string') return false;
  return (
    code.startsWith('08') || code === '40001' || code === '40P01' || code.startsWith('53') || code.startsWith('57P')
  );
}

/** Node socket errors that mean the server is not there (yet). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN'].includes(code)
  );
}
