/**
 * @module store/pg-database
 * Database port over a PostgreSQL server through a `pg` Pool.
 */
import pg from 'pg';
import {
  type Database,
  type Queryable,
  type QueryOptions,
  DatabaseUnavailableError,
  isConnectionError,
  isTransientSqlState,
} from './database.js';
import { redact } from '../config.js';
import { copyRowsWith, copyTuplesWith } from './pg-copy.js';
import { createStatementCanceller, queryCancellable } from './pg-cancel.js';
import { createStatementNames } from './pg-prepared.js';

const INT8_OID = 20;
const BYTEA_OID = 17;

export interface PgDatabaseSettings {
  maxConnections?: number;
  connectionTimeoutMillis?: number;
  /** reported in errors; never logged with its password */
  applicationName?: string;
  /**
   * A query with no answer for this long (a frozen server, a network partition) fails as
   * unavailable instead of holding its request, and an in-flight slot, forever. Default 60 s:
   * far above a large batch's insert, below the TCP retransmission give-up (~15 min).
   */
  queryTimeoutMillis?: number;
  /**
   * Prepare the statements marked `prepared` (QueryOptions). Default on; off behind a pooler
   * that cannot hold them, such as PgBouncer in transaction mode before 1.21.
   */
  preparedStatements?: boolean;
}

/**
 * Every session runs without JIT or parallel plans. tapedeck's statements each read a few
 * index pages, but the planner prices some of them high (a key probed in each of many day
 * partitions, a message id whose rows it cannot estimate) and then compiled them, for seconds
 * of work that took milliseconds, or started workers for them (docs/architecture.md, "Database
 * adapters"). Set once per connection, so no statement pays a round trip for it.
 */
const SESSION_SETTINGS =
  "SELECT set_config('jit', 'off', false), set_config('max_parallel_workers_per_gather', '0', false)";

/** Idle time before TCP keepalive probes a pooled connection: under common NAT idle timeouts. */
const IDLE_PROBE_MILLIS = 60_000;

// The same parser for every query, not a closure made per result's fields (docs/architecture.md,
// "Decisions and why").
const parseInt8 = (v: string): bigint => BigInt(v);
// pg's own parser as the module loaded, for the escape format (bytea_output = 'escape'), which
// a server may be set to; the default hex format is decoded here.
const parseByteaEscaped = pg.types.getTypeParser(BYTEA_OID, 'text');
const parseBytea = (v: string): unknown =>
  v.startsWith('\\x') ? Buffer.from(v.slice(2), 'hex') : parseByteaEscaped(v);

export function createPgDatabase(url: string, settings: PgDatabaseSettings = {}): Database {
  // A private type set: the global pg.types would change parsing for the embedding app too.
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID && format !== 'binary') return parseInt8;
      if (oid === BYTEA_OID && format !== 'binary') return parseBytea;
      return pg.types.getTypeParser(oid, format ?? 'text');
    },
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: settings.maxConnections ?? 8,
    connectionTimeoutMillis: settings.connectionTimeoutMillis ?? 5_000,
    application_name: settings.applicationName ?? 'tapedeck',
    query_timeout: settings.queryTimeoutMillis ?? 60_000,
    types: types as pg.CustomTypesConfig,
    // Idle connections stay open: a new one costs a connect and a backend whose caches and
    // heap start cold, which made the first read after a pause several times slower
    // (docs/architecture.md, "Database adapters"). TCP keepalive probes an idle one, so a NAT
    // or firewall keeps it, and one that died unseen is closed once its probes go unanswered.
    idleTimeoutMillis: 0,
    keepAlive: true,
    keepAliveInitialDelayMillis: IDLE_PROBE_MILLIS,
    // idle connections do not keep a command-line process running
    allowExitOnIdle: true,
    // awaited before the new connection is handed out; a failure fails the connect
    onConnect: async (client) => {
      await client.query(SESSION_SETTINGS);
    },
  });
  // An idle client's error is re-emitted on the pool; unheard, it would kill the process.
  pool.on('error', () => {});
  // The pool listens only while a client is idle. A client checked out for a transaction
  // whose connection drops emits 'error' too (besides failing its query); unheard, that
  // would kill the process. The failed query already reports it, so listen and move on.
  pool.on('connect', (client) => client.on('error', () => {}));

  const canceller = createStatementCanceller(url, settings.applicationName ?? 'tapedeck');
  const where = redact(url);
  let names = settings.preparedStatements === false ? null : createStatementNames();
  /** The error as the ports report it; `query`: the statement it came from, if any. */
  const translate = (error: unknown, query?: string | pg.QueryConfig): unknown => {
    const code = (error as { code?: unknown }).code;
    // a statement prepared under a name (see `statement`)
    if (typeof query === 'object' && LOST_PREPARED_STATEMENT.has(code as string)) {
      // A pooler in transaction mode that does not keep prepared statements (PgBouncer before
      // 1.21) hands a connection's statements to server sessions that never prepared them.
      // Unprepared from now on; this transaction fails as retryable, so nothing is lost.
      names = null;
      return new DatabaseUnavailableError(
        `PostgreSQL at ${where} lost a prepared statement between transactions, as behind a connection pooler in transaction mode that does not keep them; tapedeck runs its statements unprepared from now on (--database-prepared-statements off does so from the start)`,
        { cause: error },
      );
    }
    if (isConnectionError(error) || isTransientSqlState(code) || isPoolTimeout(error)) {
      return new DatabaseUnavailableError(`PostgreSQL at ${where} is unavailable: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return error;
  };
  // the statement as pg takes it, beside its values: named when it is prepared
  const statement = (sql: string, options?: QueryOptions): string | pg.QueryConfig => {
    const name = options?.prepared ? names?.(sql) : null;
    return name ? { name, text: sql } : sql;
  };
  const run = async <Row>(
    client: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<Row[]> => {
    const query = statement(sql, options);
    try {
      const result = await client.query(query, params as unknown[] | undefined);
      return result.rows as Row[];
    } catch (error) {
      throw translate(error, query);
    }
  };

  // A pool connection for one statement; waiting for one stops when the signal aborts.
  const checkout = (signal: AbortSignal): Promise<pg.PoolClient> =>
    new Promise((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      pool.connect().then(
        (client) => {
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) client.release();
          else resolve(client);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(translate(error));
        },
      );
    });
  const runSignalled = async <Row>(
    sql: string,
    params: readonly unknown[] | undefined,
    signal: AbortSignal,
    options: QueryOptions,
  ) => {
    signal.throwIfAborted();
    const client = await checkout(signal);
    const query = statement(sql, options);
    try {
      return await queryCancellable<Row>(client, query, params, signal, canceller, (cancelled) =>
        client.release(cancelled ? new Error('statement cancelled') : undefined),
      );
    } catch (error) {
      throw signal.aborted ? error : translate(error, query);
    }
  };

  return {
    kind: 'postgres',
    query: (sql, params, options) =>
      options?.signal ? runSignalled(sql, params, options.signal, options) : run(pool, sql, params, options),
    exec: async (sql) => {
      await run(pool, sql);
    },
    async transaction(fn, options) {
      let client: pg.PoolClient;
      try {
        if (options?.untimed) {
          // The pool's query_timeout would end a long migration, and one that waits for
          // another replica's migration to finish: a client of its own has none.
          const own = new pg.Client({
            connectionString: url,
            application_name: settings.applicationName ?? 'tapedeck',
            types: types as pg.CustomTypesConfig,
          });
          own.on('error', () => {});
          await own
            .connect()
            .then(() => own.query(SESSION_SETTINGS))
            .catch(async (error: unknown) => {
              await own.end().catch(() => {});
              throw error;
            });
          // released by ending it
          client = Object.assign(own, { release: () => void own.end().catch(() => {}) }) as pg.PoolClient;
        } else {
          client = await pool.connect();
        }
      } catch (error) {
        throw translate(error);
      }
      // Set when a statement was cancelled: the connection is destroyed, not rolled back and
      // reused, so the cancel cannot reach a later statement on it.
      let cancelled = false;
      const tx: Queryable = {
        query: async (sql, params, options) => {
          const signal = options?.signal;
          if (!signal) return run(client, sql, params, options);
          const query = statement(sql, options);
          try {
            return await queryCancellable(client, query, params, signal, canceller, (c) => {
              if (c) cancelled = true;
            });
          } catch (error) {
            throw signal.aborted ? error : translate(error, query);
          }
        },
        exec: async (sql) => {
          await run(client, sql);
        },
        async copyRows(table, columns, rows) {
          try {
            return await copyRowsWith(client, table, columns, rows);
          } catch (error) {
            throw translate(error);
          }
        },
        async copyTuples(table, columns, tuples) {
          try {
            return await copyTuplesWith(client, table, columns, tuples);
          } catch (error) {
            throw translate(error);
          }
        },
      };
      try {
        await tx.query('BEGIN');
        // and none the server or the role may set
        if (options?.untimed) await tx.query('SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0');
        const value = await fn(tx);
        await tx.query('COMMIT');
        client.release(cancelled ? new Error('statement cancelled') : undefined);
        return value;
      } catch (error) {
        if (error instanceof DatabaseUnavailableError || cancelled) {
          // The connection is lost or not answering (a ROLLBACK would queue behind the query
          // that timed out): destroy it; the server rolls back a transaction whose session ends.
          client.release(error instanceof Error ? error : true);
          throw error;
        }
        // A failed ROLLBACK means the connection is broken: destroy it rather than reuse it.
        await client.query('ROLLBACK').then(
          () => client.release(),
          (e: Error) => client.release(e),
        );
        throw error;
      }
    },
    async ping() {
      await run(pool, 'SELECT 1');
    },
    poolUsage() {
      return { max: pool.options.max, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
    },
    async close() {
      await pool.end();
    },
  };
}

/** duplicate_prepared_statement, invalid_sql_statement_name */
const LOST_PREPARED_STATEMENT = new Set(['42P05', '26000']);

function isPoolTimeout(error: unknown): boolean {
  return (
    error instanceof Error &&
    /timeout exceeded when trying to connect|Connection terminated|Query read timeout/i.test(error.message)
  );
}
