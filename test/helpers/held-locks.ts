/**
 * Test helpers for a transaction that holds locks while another request waits for them (on a
 * PostgreSQL server): a transaction kept open after its first work, and the backend found
 * waiting for an advisory lock.
 */
import type { Database, Queryable } from '../../src/store/database.js';

export interface HeldTransaction {
  /** Lets the transaction go on, doing `then` in it when given; resolves once it has committed. */
  release(then?: (tx: Queryable) => Promise<unknown>): Promise<void>;
}

/** Opens a transaction, does `first` in it, and resolves while it holds what `first` took. */
export async function holdTransaction(
  db: Database,
  first: (tx: Queryable) => Promise<unknown>,
): Promise<HeldTransaction> {
  let go!: (then: ((tx: Queryable) => Promise<unknown>) | undefined) => void;
  const gate = new Promise<((tx: Queryable) => Promise<unknown>) | undefined>((resolve) => {
    go = resolve;
  });
  let held!: () => void;
  const holding = new Promise<void>((resolve) => {
    held = resolve;
  });
  const done = db.transaction(async (tx) => {
    await first(tx);
    held();
    await (await gate)?.(tx);
  });
  await Promise.race([holding, done]); // `first` failing ends it here
  return {
    release(then) {
      go(then);
      return done;
    },
  };
}

/** The backend waiting for an advisory lock, once there is one (within 10 s). */
export async function advisoryWaiter(db: Database): Promise<number> {
  for (let waited = 0; waited <= 10_000; waited += 20) {
    const rows = await db.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
    );
    if (rows.length === 1) return rows[0].pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no request waited for a trace lock');
}
