/**
 * @module replay/owners
 * Which replica holds each replay, in the shared database (tapedeck_store.replay_owners), so
 * that replicas on one PostgreSQL database share their replays: a call reaching a replica
 * that does not hold the replay is forwarded to the one that does (forward.ts), and the
 * owner serves it exactly as it serves its own callers. A row never changes once written
 * (it only goes, when its replica stops), so a replica remembers the owners it looked up,
 * and asks again when one cannot be reached.
 */
import { networkInterfaces } from 'node:os';
import type { Queryable } from '../store/database.js';
import type { ReplayOwners } from './settings.js';

/** Owners remembered per replica; past this the oldest lookups are forgotten first. */
const REMEMBERED = 10_000;

export class DatabaseReplayOwners implements ReplayOwners {
  private selfUrl: string | null = null;
  private readonly known = new Map<string, { url: string; expiresNs: bigint }>();

  constructor(private readonly db: Queryable) {}

  /** This replica's URL, as the others reach it; known once its HTTP server listens. */
  get self(): string | null {
    return this.selfUrl;
  }

  listening(url: string): void {
    this.selfUrl = url.replace(/\/$/, '');
  }

  async claim(id: string, expiresNs: bigint, nowNs: bigint): Promise<void> {
    if (this.selfUrl === null) return;
    await this.db.query('DELETE FROM tapedeck_store.replay_owners WHERE expires_at_ns <= $1', [nowNs]);
    await this.db.query('INSERT INTO tapedeck_store.replay_owners (id, owner_url, expires_at_ns) VALUES ($1, $2, $3)', [
      id,
      this.selfUrl,
      expiresNs,
    ]);
  }

  async ownerOf(id: string, nowNs: bigint, fresh = false): Promise<string | undefined> {
    const hit = this.known.get(id);
    if (hit && hit.expiresNs > nowNs && !fresh) return hit.url;
    this.known.delete(id);
    const [row] = await this.db.query<{ owner_url: string; expires_at_ns: bigint }>(
      'SELECT owner_url, expires_at_ns FROM tapedeck_store.replay_owners WHERE id = $1 AND expires_at_ns > $2',
      [id, nowNs],
    );
    if (!row) return undefined;
    if (this.known.size >= REMEMBERED) this.known.delete(this.known.keys().next().value as string);
    this.known.set(id, { url: row.owner_url, expiresNs: BigInt(row.expires_at_ns) });
    return row.owner_url;
  }

  /** At graceful shutdown: this replica's replays end with it, so the others answer 404 for them. */
  async release(): Promise<void> {
    if (this.selfUrl === null) return;
    await this.db.query('DELETE FROM tapedeck_store.replay_owners WHERE owner_url = $1', [this.selfUrl]);
  }
}

/**
 * This replica's URL when --replica-url is not set: the address it listens on or, listening on
 * every address, the machine's first non-loopback IPv4 address (a pod's IP in Kubernetes).
 */
export function replicaUrlOf(host: string, port: number): string {
  const any = host === '0.0.0.0' || host === '::' || host === '';
  const address = any ? firstOutwardAddress() : host;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

function firstOutwardAddress(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}
