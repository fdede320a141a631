/**
 * @module replay/settings
 * What the replay proxy is wired with (deps) and bounded by (settings). Every bound below is
 * stated in docs/api.md ("Limits"); each default carries its unit in its name.
 */
import type { Tape } from '../normalize/step.js';
import type { SpanRecord } from '../spans/span-record.js';

/** A provider a fork forwards live calls to: base URL as the official SDKs take it, and key. */
export interface Upstream {
  /** OpenAI's ends in /v1 (…/chat/completions is appended); Anthropic's does not (…/v1/messages) */
  baseUrl: string;
  key: string | null;
}

/** Who is calling: a tenant-bound credential sees only its tenant; an unbound one is the operator view. */
export interface Principal {
  tenant: string | null;
  bound: boolean;
}

/** Why an offloaded value could not be read, when the payload store can tell. */
export type UnreadableReason = 'erased' | 'retention';

/**
 * What a replay holds, as erasures name it: the tenant and run it was read from, the traces
 * and spans ("trace hex/span hex") of its steps, and the payloads its steps referenced.
 */
export interface HeldContent {
  tenant: string;
  run: string;
  traces: ReadonlySet<string>;
  spans: ReadonlySet<string>;
  payloads: ReadonlySet<string>;
}

/** Erasures as replays see them (src/erasure/erasure-feed.ts). */
export interface ErasureWatch {
  /** the number of the last erasure heard of, in the order heard; 0n before any */
  readonly latest: bigint;
  /** the id of the first erasure numbered after `since` that covers `held`, or null */
  covering(since: bigint, held: HeldContent): string | null;
  /** listener runs once each erasure is recorded */
  subscribe(listener: () => void): void;
  /** hears of the erasures other replicas recorded (their listeners run); absent or a no-op on one server */
  refresh?(): Promise<void>;
}

/** Which replica holds each replay, when several share one database (owners.ts). */
export interface ReplayOwners {
  /** this replica's URL as the others reach it; null until it listens (replays then stay local) */
  readonly self: string | null;
  /** records this replica as the holder of a replay being created */
  claim(id: string, expiresNs: bigint, nowNs: bigint): Promise<void>;
  /**
   * the URL of the replica holding a live replay, or undefined when none does; `fresh` asks
   * the database again rather than remembering (the owner may have stopped since)
   */
  ownerOf(id: string, nowNs: bigint, fresh?: boolean): Promise<string | undefined>;
}

export interface ReplayDeps {
  /** The run's tape as stored (references not resolved); undefined when the run is unknown. */
  loadTape(run: string, tenant: string | null): Promise<Tape | undefined>;
  /** A payload's bytes ("sha256/<hex>"), or undefined when it cannot be read. */
  readPayload(ref: string): Promise<Uint8Array | undefined>;
  /** Optional: why readPayload answered undefined, so a refusal can say which it was. */
  whyUnreadable?(ref: string): Promise<UnreadableReason | undefined>;
  /** Optional: a model step's recorded time to first chunk, for timed playback (cassettes record it). */
  firstChunkNs?(run: string, step: number): bigint | null;
  /** Wall clock in nanoseconds since the epoch. */
  now?: () => bigint;
  /** Erasures recorded while replays live: a replay holding what one covers is withdrawn. */
  erasures?: ErasureWatch;
  /** The origin base_urls are built on (e.g. "http://localhost:4318"); "" gives relative URLs. */
  baseUrl?(req: Request): string;
  /**
   * Where forks forward live calls, by wire. A fork's call past its edited answer on a wire
   * with no upstream is refused (upstream_not_configured), never sent anywhere.
   */
  upstreams?: { openai?: Upstream; anthropic?: Upstream };
  /** Writes a fork's spans through the ingest path, in the tenant given. Absent: forks are refused. */
  recordSpans?(spans: SpanRecord[], tenant: string): Promise<void>;
  /** The outbound fetch forks use (tests count calls through it); default: the global fetch. */
  fetch?: typeof fetch;
  /**
   * Replicas sharing one database: replays created here are recorded as held here, and a
   * call for a replay another replica holds is forwarded to it. Absent: replays are local.
   */
  owners?: ReplayOwners;
  /** Told the routes' registry once, so its counts can be read when metrics are scraped. */
  observeRegistry?(registry: RegistryUsage): void;
}

/** What the replay registry holds now. */
export interface RegistryUsage {
  /** live replays */
  readonly size: number;
  /** memory charged to them, as the registry counts it against its bounds */
  readonly countedBytes: number;
}

export interface ReplaySettings {
  /** where the main app mounts these routes; base_urls are built on it */
  mountPath: string;
  /** a replay lives this long from creation */
  ttlNs: bigint;
  /** a run with more spans than this is refused rather than replayed as its beginning */
  maxRunSpans: number;
  /** offloaded answers and tool records read into one replay, in payload bytes */
  tapeMaxBytes: number;
  /** one rendered response (plain or the whole stream), in bytes */
  maxResponseBytes: number;
  /** an agent's request body, in bytes */
  maxRequestBytes: number;
  /**
   * how long a request body may take to arrive once its turn came (--body-timeout-ms): a
   * call reads its body holding its replay's turn, so a stalled upload must not hold it
   */
  bodyTimeoutMs: number;
  /** live replays per share (one tenant's data, or the operator view) */
  shareMaxReplays: number;
  /** counted memory per share */
  shareMaxBytes: number;
  /** live replays in the whole registry */
  totalMaxReplays: number;
  /** counted memory in the whole registry */
  totalMaxBytes: number;
  /** entries a replay's call log keeps; charged in full at creation */
  callLogEntries: number;
  /** first differences explained per replay (each re-reads the recording) */
  maxExplanations: number;
  /** Retry-After for a bound credential refused by the whole-registry bound */
  boundRegistryRetryAfterSeconds: number;
  /** withdrawn replays (their ids answer 410 replay_erased) kept per share, and in total */
  shareMaxWithdrawn: number;
  totalMaxWithdrawn: number;
  /** how long a fork waits for its upstream's answer, streamed or not, before giving up */
  upstreamTimeoutMs: number;
}

const MiB = 1024 * 1024;

export const defaultReplaySettings: Readonly<ReplaySettings> = Object.freeze({
  mountPath: '/v1/replays',
  ttlNs: 3_600_000_000_000n, // one hour
  maxRunSpans: 20_000,
  tapeMaxBytes: 8 * MiB, // --tape-max-bytes default
  maxResponseBytes: 64 * MiB,
  maxRequestBytes: 64 * MiB, // the same bound as an OTLP body
  bodyTimeoutMs: 30_000, // --body-timeout-ms default
  shareMaxReplays: 64,
  shareMaxBytes: 64 * MiB,
  totalMaxReplays: 1024,
  totalMaxBytes: 512 * MiB,
  callLogEntries: 4096,
  maxExplanations: 8,
  // a bound credential has no business learning when another tenant's replay expires
  boundRegistryRetryAfterSeconds: 60,
  shareMaxWithdrawn: 64,
  totalMaxWithdrawn: 1024,
  upstreamTimeoutMs: 600_000,
});

/** Nanosecond wall clock: Date.now anchored once, hrtime for resolution. */
const anchorNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
export function wallClockNs(): bigint {
  return anchorNs + process.hrtime.bigint();
}
