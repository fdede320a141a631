/**
 * @module replay/registry
 * Live replays, in memory, bounded per share first and then in total, by count and by counted
 * memory. A share is one tenant's data as seen by its bound credentials, or the operator view
 * (unbound credentials), which counts as a share of its own.
 *
 * Creation reserves a place before it reads anything and charges memory while the snapshot is
 * built, so concurrent creations cannot overshoot a bound together. Past a bound: 429 with
 * Retry-After (the time until enough of the share's replays expire; for the whole registry the
 * same for the operator view, a flat figure for bound credentials). A snapshot larger than a
 * whole share can never be held: 409, as soon as building passes the share. A live replay is
 * never evicted to make room; expired ones are forgotten lazily.
 *
 * A replay withdrawn by an erasure leaves the live ones at once (its place and memory are
 * free again) and keeps answering 410 until it would have expired, among withdrawn replays
 * bounded on their own: past a share's or the registry's bound, the one closest to expiring
 * is forgotten (its id then answers 404).
 */
import { ApiError } from '../errors.js';
import { refusal } from './errors.js';
import type { ReplaySettings } from './settings.js';

/** What the registry needs to know about a held replay. */
export interface Held {
  readonly id: string;
  readonly shareKey: string;
  readonly expiresNs: bigint;
  chargedBytes: number;
}

interface Share {
  live: Set<Held>;
  withdrawn: Set<Held>;
  pending: number;
  bytes: number;
}

export class ReplayRegistry<R extends Held> {
  private readonly replays = new Map<string, R>();
  private readonly shares = new Map<string, Share>();
  private pendingTotal = 0;
  private withdrawnTotal = 0;
  private bytesTotal = 0;
  private earliestExpiryNs: bigint | null = null;

  constructor(
    private readonly settings: ReplaySettings,
    private readonly now: () => bigint,
  ) {}

  get size(): number {
    return this.replays.size;
  }

  get countedBytes(): number {
    return this.bytesTotal;
  }

  /** A live replay by id; an expired one is forgotten and answers undefined. */
  get(id: string): R | undefined {
    this.sweep();
    return this.replays.get(id);
  }

  /** The live replays (not withdrawn, maybe expired), for checking them against an erasure. */
  live(): R[] {
    return [...this.replays.values()].filter((r) => this.shares.get(r.shareKey)?.live.has(r));
  }

  /** Moves a live replay to the withdrawn ones, freeing its place and memory at once. */
  withdraw(replay: R): void {
    const share = this.share(replay.shareKey);
    if (!share.live.delete(replay)) return;
    share.bytes -= replay.chargedBytes;
    this.bytesTotal -= replay.chargedBytes;
    replay.chargedBytes = 0;
    share.withdrawn.add(replay);
    this.withdrawnTotal++;
    if (share.withdrawn.size > this.settings.shareMaxWithdrawn) this.forgetSoonest([...share.withdrawn]);
    if (this.withdrawnTotal > this.settings.totalMaxWithdrawn)
      this.forgetSoonest([...this.shares.values()].flatMap((s) => [...s.withdrawn]));
  }

  private forgetSoonest(withdrawn: Held[]): void {
    const soonest = withdrawn.reduce((a, b) => (b.expiresNs < a.expiresNs ? b : a));
    this.replays.delete(soonest.id);
    this.share(soonest.shareKey).withdrawn.delete(soonest);
    this.withdrawnTotal--;
  }

  /** Claims one place in the share and the registry; throws 429 when either is full. */
  reserve(shareKey: string, bound: boolean): Reservation<R> {
    this.sweep();
    const share = this.share(shareKey);
    if (share.live.size + share.pending >= this.settings.shareMaxReplays) {
      throw this.busy(
        `this share already holds ${this.settings.shareMaxReplays} live replays`,
        this.retryAfter(
          [...share.live],
          1,
          0,
          share.live.size + share.pending,
          share.bytes,
          this.settings.shareMaxReplays,
          this.settings.shareMaxBytes,
        ),
      );
    }
    if (this.replays.size + this.pendingTotal >= this.settings.totalMaxReplays) {
      throw this.busy(
        `the replay registry already holds ${this.settings.totalMaxReplays} live replays`,
        this.totalRetryAfter(bound, 1, 0),
      );
    }
    share.pending++;
    this.pendingTotal++;
    return new Reservation(this, shareKey, bound);
  }

  /** @internal used by Reservation */
  charge(r: Reservation<R>, bytes: number): void {
    const share = this.share(r.shareKey);
    share.bytes += bytes;
    this.bytesTotal += bytes;
    if (r.bytes > this.settings.shareMaxBytes) {
      r.release();
      throw refusal(
        'snapshot_too_large',
        `this run's replay needs more than ${this.settings.shareMaxBytes} bytes of counted memory, more than a whole share holds, so it can never be created`,
      );
    }
    if (share.bytes > this.settings.shareMaxBytes) {
      const others = share.bytes - r.bytes;
      r.release();
      throw this.busy(
        "this share has no room for the replay's memory",
        this.retryAfter(
          [...share.live],
          0,
          r.bytes,
          share.live.size + share.pending,
          others,
          Infinity,
          this.settings.shareMaxBytes,
        ),
      );
    }
    if (this.bytesTotal > this.settings.totalMaxBytes) {
      r.release();
      throw this.busy(
        "the replay registry has no room for the replay's memory",
        this.totalRetryAfter(r.bound, 0, r.bytes),
      );
    }
  }

  /** @internal */
  settle(r: Reservation<R>, replay: R | null): void {
    const share = this.share(r.shareKey);
    share.pending--;
    this.pendingTotal--;
    if (replay === null) {
      share.bytes -= r.bytes;
      this.bytesTotal -= r.bytes;
      return;
    }
    replay.chargedBytes = r.bytes;
    share.live.add(replay);
    this.replays.set(replay.id, replay);
    if (this.earliestExpiryNs === null || replay.expiresNs < this.earliestExpiryNs)
      this.earliestExpiryNs = replay.expiresNs;
  }

  private share(key: string): Share {
    let s = this.shares.get(key);
    if (!s) {
      s = { live: new Set(), withdrawn: new Set(), pending: 0, bytes: 0 };
      this.shares.set(key, s);
    }
    return s;
  }

  private sweep(): void {
    const now = this.now();
    if (this.earliestExpiryNs === null || now < this.earliestExpiryNs) return;
    let earliest: bigint | null = null;
    for (const r of this.replays.values()) {
      if (r.expiresNs <= now) {
        this.replays.delete(r.id);
        const share = this.share(r.shareKey);
        share.live.delete(r);
        if (share.withdrawn.delete(r)) this.withdrawnTotal--;
        share.bytes -= r.chargedBytes;
        this.bytesTotal -= r.chargedBytes;
        if (share.live.size === 0 && share.pending === 0 && share.withdrawn.size === 0) this.shares.delete(r.shareKey);
      } else if (earliest === null || r.expiresNs < earliest) {
        earliest = r.expiresNs;
      }
    }
    this.earliestExpiryNs = earliest;
  }

  private totalRetryAfter(bound: boolean, needCount: number, needBytes: number): number {
    if (bound) return this.settings.boundRegistryRetryAfterSeconds;
    const others = this.bytesTotal - needBytes;
    return this.retryAfter(
      [...this.replays.values()],
      needCount,
      needBytes,
      this.replays.size + this.pendingTotal,
      others,
      this.settings.totalMaxReplays,
      this.settings.totalMaxBytes,
    );
  }

  /** Seconds until enough of these replays expire for needCount more places and needBytes more bytes. */
  private retryAfter(
    live: Held[],
    needCount: number,
    needBytes: number,
    count: number,
    bytes: number,
    maxCount: number,
    maxBytes: number,
  ): number {
    const now = this.now();
    const sorted = live.sort((a, b) => (a.expiresNs < b.expiresNs ? -1 : a.expiresNs > b.expiresNs ? 1 : 0));
    let at: bigint | null = null;
    for (const r of sorted) {
      if (count + needCount <= maxCount && bytes + needBytes <= maxBytes) break;
      count--;
      bytes -= r.chargedBytes;
      at = r.expiresNs;
    }
    if (at === null) return this.settings.boundRegistryRetryAfterSeconds; // held by creations in progress
    const seconds = Number((at - now + 999_999_999n) / 1_000_000_000n);
    return Math.max(1, seconds);
  }

  private busy(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError('too_many_replays', `${message}; try again in ${retryAfterSeconds} s, when replays expire`, {
      retryAfterSeconds,
      extra: { retry_after_seconds: retryAfterSeconds },
    });
  }
}

/** One creation's claim on the registry: charge memory as the snapshot grows, then commit or release. */
export class Reservation<R extends Held> {
  bytes = 0;
  private settled = false;

  constructor(
    private readonly registry: ReplayRegistry<R>,
    readonly shareKey: string,
    readonly bound: boolean,
  ) {}

  charge(bytes: number): void {
    if (this.settled) return;
    this.bytes += bytes;
    this.registry.charge(this, bytes);
  }

  commit(replay: R): void {
    if (this.settled) throw new Error('reservation already settled');
    this.settled = true;
    this.registry.settle(this, replay);
  }

  release(): void {
    if (this.settled) return;
    this.settled = true;
    this.registry.settle(this, null);
  }
}
