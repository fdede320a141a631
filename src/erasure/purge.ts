/**
 * @module erasure/purge
 * Deletes the payload bytes erasures and retention left to purge (tapedeck_store.
 * erasure_payloads), a few at a time, in the background. Each is checked again just before
 * it goes: a payload a step stored since references again is kept (the erasure counted it,
 * and its progress says how many were purged). An erasure is complete once none is left.
 * Bytes go before the row that lists them, so a crash in between leaves the row to be done
 * again, never a file nobody will delete.
 */
import type { Logger } from '../logger.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { Database } from '../store/database.js';

const BATCH = 100;
const IDLE_POLL_MS = 5_000;

/** Purges one batch; returns how many payloads it handled (0: nothing left). */
export async function purgeErasedPayloads(db: Database, payloads: PayloadStore, batch = BATCH): Promise<number> {
  const rows = await db.query<{ erasure_id: string; digest: string }>(
    'SELECT erasure_id, digest FROM tapedeck_store.erasure_payloads ORDER BY erasure_id, digest LIMIT $1',
    [batch],
  );
  for (const row of rows) {
    const [still] = await db.query(
      `SELECT 1 FROM tapedeck_store.steps st
        WHERE tapedeck_store.payload_ref_of(st.request) = $1 OR tapedeck_store.payload_ref_of(st.response) = $1
        LIMIT 1`,
      [row.digest],
    );
    let purged = 0;
    if (!still) {
      await payloads.delete(row.digest);
      await db.query('DELETE FROM tapedeck_store.payloads WHERE digest = $1', [row.digest]);
      purged = 1;
    }
    // Another server sharing the database may purge the same row: only the one whose delete
    // finds it counts it, and deleting bytes twice is harmless.
    await db.transaction(async (tx) => {
      const claimed = await tx.query(
        'DELETE FROM tapedeck_store.erasure_payloads WHERE erasure_id = $1 AND digest = $2 RETURNING 1',
        [row.erasure_id, row.digest],
      );
      if (claimed.length === 0) return;
      await tx.query(
        `UPDATE tapedeck_store.erasures SET payloads_purged = payloads_purged + $2,
                status = CASE WHEN EXISTS (SELECT 1 FROM tapedeck_store.erasure_payloads WHERE erasure_id = $1)
                              THEN status ELSE 'complete' END,
                completed_at = CASE WHEN EXISTS (SELECT 1 FROM tapedeck_store.erasure_payloads WHERE erasure_id = $1)
                                    THEN NULL ELSE now() END
          WHERE id = $1`,
        [row.erasure_id, purged],
      );
    });
  }
  return rows.length;
}

/** The background purge: runs when woken, and every few seconds while work may be left. */
export class PayloadPurge {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly payloads: PayloadStore,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Purges now (after the pass in progress, if any). */
  wake(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.running = (this.running ?? Promise.resolve()).then(() => this.pass());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async pass(): Promise<void> {
    let purged = 0;
    try {
      for (let n = 1; n > 0 && !this.stopped; purged += n) n = await purgeErasedPayloads(this.db, this.payloads);
      if (purged > 0) this.logger.info({ payloads: purged }, 'purged erased payloads');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not purge erased payloads; trying again shortly');
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), IDLE_POLL_MS);
    this.timer.unref();
  }
}
