/**
 * @module store/pg-cancel
 * Stopping a PostgreSQL statement when its request's signal aborts. Closing our end of the
 * socket alone would not stop it: the server notices a client that went away only when it
 * next writes to it, so a long scan, or a wait on a lock, runs on and holds what it holds.
 * The statement is cancelled on the server (pg_cancel_backend, from a session of its own:
 * the pool may have no connection free), and its connection is then destroyed rather than
 * reused, so a cancel that arrives late can never stop the next statement run on it.
 */
import pg from 'pg';

export interface StatementCanceller {
  /** Cancels the statement the backend `pid` runs; resolves when the server took the cancel, or could not be reached. */
  cancel(pid: number): Promise<void>;
}

export function createStatementCanceller(url: string, applicationName: string): StatementCanceller {
  return {
    async cancel(pid) {
      const session = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: 5_000,
        application_name: `${applicationName} cancel`,
      });
      // Unheard, a socket error on this short-lived session would end the process.
      session.on('error', () => {});
      try {
        await session.connect();
        await session.query('SELECT pg_cancel_backend($1)', [pid]);
      } catch {
        // Unreachable: the connection is destroyed all the same, and the server ends the
        // statement when it next writes to it.
      } finally {
        await session.end().catch(() => {});
      }
    },
  };
}

/**
 * Runs one statement on `client`, cancelling it when `signal` aborts, and resolves with its
 * rows or rejects with the signal's reason once it aborted. `done` is called exactly once:
 * with true when the statement was cancelled (destroy the connection), false otherwise.
 */
export async function queryCancellable<Row>(
  client: pg.PoolClient,
  statement: string | pg.QueryConfig,
  params: readonly unknown[] | undefined,
  signal: AbortSignal,
  canceller: StatementCanceller,
  done: (cancelled: boolean) => void,
): Promise<Row[]> {
  let cancelled = false;
  const onAbort = (): void => {
    cancelled = true;
    const pid = (client as unknown as { processID: number | null }).processID;
    if (pid !== null) void canceller.cancel(pid);
    done(true);
  };
  try {
    signal.throwIfAborted();
    signal.addEventListener('abort', onAbort, { once: true });
    const result = await client.query(statement, params as unknown[] | undefined);
    signal.throwIfAborted();
    return result.rows as Row[];
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (!cancelled) done(false);
  }
}
