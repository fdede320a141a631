/**
 * @module erasure/erasure-feed
 * The erasures this server recorded in the last hour, in memory, for the replays it holds
 * (docs/security.md "Erasure reaches replays"): a replay is a copy taken out of the store, so
 * every call through one asks whether an erasure numbered after its creation covers what it
 * holds. With none since, that is one comparison. Notices older than a replay can live are
 * dropped: no live replay predates them.
 */
import type { ErasureWatch, HeldContent } from '../replay/settings.js';

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
  seq: bigint;
  atMs: number;
  tenant: string | undefined;
  runs: Set<string>;
  traces: Set<string>;
  spans: Set<string>;
  payloads: Set<string>;
}

export class ErasureFeed implements ErasureWatch {
  private entries: Entry[] = [];
  private readonly listeners: (() => void)[] = [];
  latest = 0n;

  constructor(
    /** how long a notice is kept: at least as long as a replay lives */
    private readonly keepMs: number = 2 * 3_600_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  record(notice: ErasureNotice): void {
    const atMs = this.nowMs();
    this.entries = this.entries.filter((e) => atMs - e.atMs < this.keepMs);
    this.entries.push({
      id: notice.id,
      seq: notice.seq,
      atMs,
      tenant: notice.tenant,
      runs: new Set(notice.runs),
      traces: new Set(notice.traces),
      spans: new Set(notice.spans),
      payloads: new Set(notice.payloads),
    });
    if (notice.seq > this.latest) this.latest = notice.seq;
    for (const listener of this.listeners) listener();
  }

  covering(since: bigint, held: HeldContent): string | null {
    if (since >= this.latest) return null;
    const at = (key: string) => `${held.tenant}\u0000${key}`;
    for (const e of this.entries) {
      if (e.seq <= since) continue;
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
}
