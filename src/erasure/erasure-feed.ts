/**
 * @module erasure/erasure-feed
 * The erasures this server recorded in the last hour, in memory, for the replays it holds
 * (docs/security.md "Erasure reaches replays"): a replay is a copy taken out of the store, so
 * every call through one asks whether an erasure numbered after its creation covers what it
 * holds. With none since, that is one comparison. Notices older than a replay can live are
 * dropped: no live replay predates them.
 *
 * Replicas on one PostgreSQL database hear of each other's erasures through
 * tapedeck_store.erasure_notices, written in each erasure's transaction: given the database,
 * refresh() reads the notices committed since its last read, and the replay routes refresh
 * before every check. Notices are numbered here in the order they arrive, not by their
 * erasure's seq, since erasures may commit out of seq order.
 */
import type { ErasureWatch, HeldContent } from '../replay/settings.js';
import type { Queryable } from '../store/database.js';

export interface ErasureNotice {
  id: string;
  seq: bigint;
  /** a whole tenant erased */
  tenant?: string;
  /** "tenant\u0000run" of runs erased whole */
  runs?: readonly string[];
  /** "tenant\u0000trace hex" of traces spans were erased from */
  traces?: readonly string[];
  /** "tenant\u0000trace hex/span hex" */
  spans?: readonly string[];
  payloads?: readonly string[];
}

interface Entry {
  id: string;
  /** the erasure's seq, recorded once */
  seq: bigint;
  /** arrival order here: what `latest` and `covering` count in */
  order: bigint;
  atMs: number;
  tenant: string | undefined;
  runs: Set<string>;
  traces: Set<string>;
  spans: Set<string>;
  payloads: Set<string>;
}

export class ErasureFeed implements ErasureWatch {
  private entries: Entry[] = [];
  private readonly seen = new Set<bigint>();
  private readonly listeners: (() => void)[] = [];
  latest = 0n;
  /** transactions below this had committed (or failed) when the notices were last read */
  private horizon = '0';
  private reading: Promise<void> | undefined;
  private nextRead: Promise<void> | undefined;

  constructor(
    /** how long a notice is kept: at least as long as a replay lives */
    private readonly keepMs: number = 2 * 3_600_000,
    private readonly nowMs: () => number = Date.now,
    /** the database replicas share; absent, this process records every erasure itself */
    private readonly db?: Queryable,
  ) {}

  record(notice: ErasureNotice): void {
    if (this.seen.has(notice.seq)) return;
    const atMs = this.nowMs();
    for (const e of this.entries) if (atMs - e.atMs >= this.keepMs) this.seen.delete(e.seq);
    this.entries = this.entries.filter((e) => atMs - e.atMs < this.keepMs);
    this.seen.add(notice.seq);
    this.latest++;
    this.entries.push({
      id: notice.id,
      seq: notice.seq,
      order: this.latest,
      atMs,
      tenant: notice.tenant,
      runs: new Set(notice.runs),
      traces: new Set(notice.traces),
      spans: new Set(notice.spans),
      payloads: new Set(notice.payloads),
    });
    for (const listener of this.listeners) listener();
  }

  covering(since: bigint, held: HeldContent): string | null {
    if (since >= this.latest) return null;
    const at = (key: string) => `${held.tenant}\u0000${key}`;
    for (const e of this.entries) {
      if (e.order <= since) continue;
      if (e.tenant === held.tenant || e.runs.has(at(held.run))) return e.id;
      for (const t of held.traces) if (e.traces.has(at(t))) return e.id;
      for (const s of held.spans) if (e.spans.has(at(s))) return e.id;
      for (const p of held.payloads) if (e.payloads.has(p)) return e.id;
    }
    return null;
  }

  subscribe(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Records the notices other replicas committed since the last read (none without a
   * database). A caller waits for a read that began after it asked: one already under way
   * may have missed an erasure committed just before.
   */
  refresh(): Promise<void> {
    if (!this.db) return Promise.resolve();
    if (!this.reading) {
      this.reading = this.readNotices(this.db).finally(() => {
        this.reading = undefined;
      });
      return this.reading;
    }
    this.nextRead ??= this.reading.then(
      () => {
        this.nextRead = undefined;
        return this.refresh();
      },
      (error: unknown) => {
        this.nextRead = undefined;
        throw error;
      },
    );
    return this.nextRead;
  }

  private async readNotices(db: Queryable): Promise<void> {
    const [row] = await db.query<{ horizon: string; notices: { seq: string; notice: StoredNotice }[] }>(
      `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,
              (SELECT coalesce(json_agg(json_build_object('seq', seq::text, 'notice', notice) ORDER BY seq), '[]'::json)
                 FROM tapedeck_store.erasure_notices WHERE xid >= $1::xid8) AS notices`,
      [this.horizon],
    );
    for (const { seq, notice } of row.notices) this.record(fromStored(notice, BigInt(seq)));
    this.horizon = row.horizon;
  }
}

/**
 * A notice as erasure_notices keeps it: its seq is a column of its own, and each
 * "tenant\u0000key" is a [tenant, key] pair, since jsonb cannot hold the NUL character.
 */
interface StoredNotice {
  id: string;
  tenant?: string;
  runs?: [string, string][];
  traces?: [string, string][];
  spans?: [string, string][];
  payloads?: readonly string[];
}

const toPairs = (keys: readonly string[] | undefined): [string, string][] | undefined =>
  keys?.map((k) => {
    const at = k.indexOf('\u0000');
    return [k.slice(0, at), k.slice(at + 1)];
  });
const fromPairs = (pairs: [string, string][] | undefined): string[] | undefined =>
  pairs?.map(([tenant, key]) => `${tenant}\u0000${key}`);

function fromStored(stored: StoredNotice, seq: bigint): ErasureNotice {
  return {
    id: stored.id,
    seq,
    tenant: stored.tenant,
    runs: fromPairs(stored.runs),
    traces: fromPairs(stored.traces),
    spans: fromPairs(stored.spans),
    payloads: stored.payloads,
  };
}

/** Records a notice for the other replicas, in the erasure's transaction; drops those no replay can need. */
export async function storeNotice(tx: Queryable, notice: ErasureNotice, keepMs = 2 * 3_600_000): Promise<void> {
  const stored: StoredNotice = {
    id: notice.id,
    tenant: notice.tenant,
    runs: toPairs(notice.runs),
    traces: toPairs(notice.traces),
    spans: toPairs(notice.spans),
    payloads: notice.payloads,
  };
  await tx.query('INSERT INTO tapedeck_store.erasure_notices (seq, notice) VALUES ($1, $2::jsonb)', [
    notice.seq,
    JSON.stringify(stored),
  ]);
  await tx.query(
    `DELETE FROM tapedeck_store.erasure_notices WHERE recorded_at < now() - make_interval(secs => $1::float8 / 1000)`,
    [keepMs],
  );
}
