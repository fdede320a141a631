/**
 * @module config
 * What operators set (flags and TAPEDECK_* environment), validated at start.
 * An invalid setting fails start-up with a message naming the setting; nothing is guessed.
 */
import path from 'node:path';

/** Where payloads over the threshold are kept (payloads/open-payload-store.ts). */
export type PayloadStoreKind = 'fs' | 'pg' | 's3';
export const PAYLOAD_STORE_KINDS: readonly PayloadStoreKind[] = ['fs', 'pg', 's3'];

export interface Config {
  /** postgres://... selects a PostgreSQL server; null selects embedded PGlite under dataDir */
  databaseUrl: string | null;
  /**
   * Prepare tapedeck's frequent statements on each PostgreSQL connection (store/pg-prepared.ts);
   * off behind a pooler that cannot hold prepared statements
   */
  databasePreparedStatements: boolean;
  /** embedded database, payloads and other local state live here */
  dataDir: string;
  /** interface both listeners bind to; loopback by default so nothing is exposed by accident */
  host: string;
  httpPort: number;
  grpcPort: number;
  /** decoded (after gunzip) request body bound; the OTLP spec recommends 64 MiB */
  maxBodyBytes: number;
  /** export requests being decoded or written at once; past it senders get a retryable 503/429 */
  maxInflightRequests: number;
  /** spans, or log records, in one export request; past it the request is refused (413) */
  maxRecordsPerRequest: number;
  /** how long an admitted export request may wait for its turn before a retryable 429 */
  queueTimeoutMs: number;
  /** how long an OTLP/HTTP or replay call body may take to arrive once read; past it a retryable 503 */
  bodyTimeoutMs: number;
  /** values larger than this go to the payload store */
  payloadThresholdBytes: number;
  /** fs: files under <dataDir>/payloads (one instance); pg: the database; s3: an S3-compatible bucket */
  payloadStore: PayloadStoreKind;
  /** S3 endpoint URL (MinIO, Ceph, R2, ...); null: AWS's own endpoint for the region */
  s3Endpoint: string | null;
  /** the bucket payloads go to; required with payloadStore s3 */
  s3Bucket: string | null;
  /** key prefix: objects are <prefix>/sha256/<hex>, or sha256/<hex> when null */
  s3Prefix: string | null;
  /** path-style URLs (<endpoint>/<bucket>/<key>), which most S3-compatible servers need */
  s3ForcePathStyle: boolean;
  /** resolve=true inlines at most this many payload bytes per tape */
  tapeMaxBytes: number;
  /** one budget per read request: reads, alignment, classification, explanation */
  queryDeadlineMs: number;
  /** read API requests worked on at once; a few more wait, the rest get a retryable 429 */
  readConcurrency: number;
  /** replay requests (creating, calls, tool steps, status) worked on at once, likewise */
  replayConcurrency: number;
  /** how long a read or replay request may wait for its slot before a retryable 429 */
  readQueueTimeoutMs: number;
  /** per-model price table (JSON); null: cost is only what spans report themselves */
  pricingFile: string | null;
  /** how long SIGTERM waits for in-flight requests before closing anyway */
  shutdownGraceMs: number;
  /**
   * Derive steps and runs from spans as they arrive (in the spans' own transaction). Off, the
   * receiver keeps spans and log records only, and `tapedeck reindex` derives them later.
   */
  derive: boolean;
  /** serve the MCP tools over streamable HTTP at /mcp (docs/mcp.md) */
  mcp: boolean;
  /**
   * Spans that ended longer ago than this (milliseconds) are deleted, continuously
   * (erasure/retention.ts); null keeps everything. Per tenant, retentionTenants overrides it.
   */
  retentionMs: number | null;
  /** per tenant ('' for no tenant): a bound in milliseconds, or null to keep everything */
  retentionTenants: ReadonlyMap<string, number | null>;
  /** where forks send live OpenAI chat-completions calls (base URL ending in /v1); null: refused */
  upstreamOpenai: string | null;
  /** its key (TAPEDECK_UPSTREAM_OPENAI_KEY, environment only: keys stay out of process lists) */
  upstreamOpenaiKey: string | null;
  /** where forks send live Anthropic messages calls (base URL without /v1); null: refused */
  upstreamAnthropic: string | null;
  /** its key (TAPEDECK_UPSTREAM_ANTHROPIC_KEY, environment only) */
  upstreamAnthropicKey: string | null;
  /**
   * Configured credentials, `name:secret:role[:tenant]` entries separated by commas (parsed
   * at start by auth/credential.ts; never logged). null: none.
   */
  tokens: string | null;
  /** a file of such entries, one a line, so secrets need not sit in the environment */
  tokensFile: string | null;
  /** serve with no credential on an address other than loopback (docs/security.md) */
  allowOpen: boolean;
  /** host names Host and Origin may name besides the loopback names; '*': any (a proxy checks) */
  allowedHosts: string[] | '*';
  /** the URL clients reach this server by, for replay base_urls; null: relative base_urls */
  publicUrl: string | null;
  /**
   * the URL other replicas on the same PostgreSQL database reach this one by, to forward
   * calls for the replays it holds; null: http://<host>:<HTTP port>, with the machine's first
   * non-loopback IPv4 address when serving every address
   */
  replicaUrl: string | null;
}

export const defaultConfig: Readonly<Config> = Object.freeze({
  databaseUrl: null,
  databasePreparedStatements: true,
  dataDir: './.tapedeck',
  host: '127.0.0.1',
  httpPort: 4318,
  grpcPort: 4317,
  maxBodyBytes: 64 * 1024 * 1024,
  maxInflightRequests: 32,
  maxRecordsPerRequest: 65_536,
  queueTimeoutMs: 5_000,
  bodyTimeoutMs: 30_000,
  payloadThresholdBytes: 256 * 1024,
  payloadStore: 'fs',
  s3Endpoint: null,
  s3Bucket: null,
  s3Prefix: null,
  s3ForcePathStyle: false,
  tapeMaxBytes: 8 * 1024 * 1024,
  queryDeadlineMs: 10_000,
  readConcurrency: 4,
  replayConcurrency: 4,
  readQueueTimeoutMs: 5_000,
  pricingFile: null,
  shutdownGraceMs: 10_000,
  derive: true,
  mcp: false,
  retentionMs: null,
  retentionTenants: new Map(),
  upstreamOpenai: null,
  upstreamOpenaiKey: null,
  upstreamAnthropic: null,
  upstreamAnthropicKey: null,
  tokens: null,
  tokensFile: null,
  allowOpen: false,
  allowedHosts: [],
  publicUrl: null,
  replicaUrl: null,
});

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`invalid configuration: ${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** Setting name, its environment variable and its CLI flag; one table so docs and code agree. */
export const settings = [
  { key: 'databaseUrl', env: 'TAPEDECK_DATABASE_URL', flag: '--database-url' },
  {
    key: 'databasePreparedStatements',
    env: 'TAPEDECK_DATABASE_PREPARED_STATEMENTS',
    flag: '--database-prepared-statements',
  },
  { key: 'dataDir', env: 'TAPEDECK_DATA_DIR', flag: '--data-dir' },
  { key: 'host', env: 'TAPEDECK_HOST', flag: '--host' },
  { key: 'httpPort', env: 'TAPEDECK_HTTP_PORT', flag: '--http-port' },
  { key: 'grpcPort', env: 'TAPEDECK_GRPC_PORT', flag: '--grpc-port' },
  { key: 'maxBodyBytes', env: 'TAPEDECK_MAX_BODY_BYTES', flag: '--max-body-bytes' },
  { key: 'maxInflightRequests', env: 'TAPEDECK_MAX_INFLIGHT_REQUESTS', flag: '--max-inflight-requests' },
  { key: 'maxRecordsPerRequest', env: 'TAPEDECK_MAX_RECORDS_PER_REQUEST', flag: '--max-records-per-request' },
  { key: 'queueTimeoutMs', env: 'TAPEDECK_QUEUE_TIMEOUT_MS', flag: '--queue-timeout-ms' },
  { key: 'bodyTimeoutMs', env: 'TAPEDECK_BODY_TIMEOUT_MS', flag: '--body-timeout-ms' },
  { key: 'payloadThresholdBytes', env: 'TAPEDECK_PAYLOAD_THRESHOLD_BYTES', flag: '--payload-threshold-bytes' },
  { key: 'payloadStore', env: 'TAPEDECK_PAYLOAD_STORE', flag: '--payload-store' },
  { key: 's3Endpoint', env: 'TAPEDECK_S3_ENDPOINT', flag: '--s3-endpoint' },
  { key: 's3Bucket', env: 'TAPEDECK_S3_BUCKET', flag: '--s3-bucket' },
  { key: 's3Prefix', env: 'TAPEDECK_S3_PREFIX', flag: '--s3-prefix' },
  { key: 's3ForcePathStyle', env: 'TAPEDECK_S3_FORCE_PATH_STYLE', flag: '--s3-force-path-style' },
  { key: 'tapeMaxBytes', env: 'TAPEDECK_TAPE_MAX_BYTES', flag: '--tape-max-bytes' },
  { key: 'queryDeadlineMs', env: 'TAPEDECK_QUERY_DEADLINE_MS', flag: '--query-deadline-ms' },
  { key: 'readConcurrency', env: 'TAPEDECK_READ_CONCURRENCY', flag: '--read-concurrency' },
  { key: 'replayConcurrency', env: 'TAPEDECK_REPLAY_CONCURRENCY', flag: '--replay-concurrency' },
  { key: 'readQueueTimeoutMs', env: 'TAPEDECK_READ_QUEUE_TIMEOUT_MS', flag: '--read-queue-timeout-ms' },
  { key: 'pricingFile', env: 'TAPEDECK_PRICING', flag: '--pricing' },
  { key: 'shutdownGraceMs', env: 'TAPEDECK_SHUTDOWN_GRACE_MS', flag: '--shutdown-grace-ms' },
  { key: 'derive', env: 'TAPEDECK_DERIVE', flag: '--derive' },
  { key: 'mcp', env: 'TAPEDECK_MCP', flag: '--mcp' },
  { key: 'retentionMs', env: 'TAPEDECK_RETENTION', flag: '--retention' },
  { key: 'retentionTenants', env: 'TAPEDECK_RETENTION_TENANTS', flag: '--retention-tenants' },
  { key: 'upstreamOpenai', env: 'TAPEDECK_UPSTREAM_OPENAI', flag: '--upstream-openai' },
  { key: 'upstreamAnthropic', env: 'TAPEDECK_UPSTREAM_ANTHROPIC', flag: '--upstream-anthropic' },
  { key: 'tokens', env: 'TAPEDECK_TOKENS', flag: '--tokens' },
  { key: 'tokensFile', env: 'TAPEDECK_TOKENS_FILE', flag: '--tokens-file' },
  { key: 'allowOpen', env: 'TAPEDECK_ALLOW_OPEN', flag: '--allow-open' },
  { key: 'allowedHosts', env: 'TAPEDECK_ALLOWED_HOSTS', flag: '--allowed-hosts' },
  { key: 'publicUrl', env: 'TAPEDECK_PUBLIC_URL', flag: '--public-url' },
  { key: 'replicaUrl', env: 'TAPEDECK_REPLICA_URL', flag: '--replica-url' },
] as const satisfies readonly { key: keyof Config; env: string; flag: string }[];

type RawSettings = Partial<Record<keyof Config, string | undefined>>;

/**
 * Builds the Config from flags (highest precedence), then environment, then defaults.
 * `flags` holds raw strings keyed by Config key, as the CLI parsed them.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, flags: RawSettings = {}): Config {
  const config: Config = { ...defaultConfig };
  for (const s of settings) {
    const fromFlag = flags[s.key];
    const raw = fromFlag ?? env[s.env];
    if (raw === undefined || raw === '') continue;
    const name = fromFlag !== undefined ? s.flag : s.env;
    (config as unknown as Record<string, unknown>)[s.key] = parseSetting(s.key, name, raw);
  }
  config.dataDir = path.resolve(config.dataDir);
  config.upstreamOpenaiKey = env.TAPEDECK_UPSTREAM_OPENAI_KEY || null;
  config.upstreamAnthropicKey = env.TAPEDECK_UPSTREAM_ANTHROPIC_KEY || null;
  if (config.payloadStore === 's3' && !config.s3Bucket) {
    throw new ConfigError('TAPEDECK_S3_BUCKET', 'required when the payload store is s3 (--payload-store s3)');
  }
  return config;
}

const integerBounds: Partial<Record<keyof Config, [number, number]>> = {
  httpPort: [0, 65535],
  grpcPort: [0, 65535],
  maxBodyBytes: [1024, 2 ** 31],
  maxInflightRequests: [1, 10_000],
  maxRecordsPerRequest: [1, 10_000_000],
  queueTimeoutMs: [1, 600_000],
  bodyTimeoutMs: [1, 600_000],
  payloadThresholdBytes: [1, 2 ** 31],
  tapeMaxBytes: [0, 2 ** 31],
  queryDeadlineMs: [1, 3_600_000],
  readConcurrency: [1, 1_000],
  replayConcurrency: [1, 1_000],
  readQueueTimeoutMs: [1, 600_000],
  shutdownGraceMs: [0, 3_600_000],
};

const switchWords: Record<string, boolean> = { on: true, true: true, '1': true, off: false, false: false, '0': false };

function parseSetting(key: keyof Config, name: string, raw: string): unknown {
  if (key === 'retentionMs' || key === 'retentionTenants') {
    try {
      return key === 'retentionMs' ? parseRetention(raw) : parseTenantRetention(raw);
    } catch (error) {
      throw new ConfigError(name, (error as Error).message);
    }
  }
  if (
    key === 'derive' ||
    key === 'mcp' ||
    key === 's3ForcePathStyle' ||
    key === 'allowOpen' ||
    key === 'databasePreparedStatements'
  ) {
    const on = switchWords[raw.trim().toLowerCase()];
    if (on === undefined) throw new ConfigError(name, `expected on or off, got ${JSON.stringify(raw)}`);
    return on;
  }
  if (key === 'payloadStore') {
    const kind = raw.trim().toLowerCase() as PayloadStoreKind;
    if (!PAYLOAD_STORE_KINDS.includes(kind))
      throw new ConfigError(name, `expected one of ${PAYLOAD_STORE_KINDS.join(', ')}, got ${JSON.stringify(raw)}`);
    return kind;
  }
  if (key === 's3Endpoint') return checkUrl(name, raw, ['http', 'https']);
  if (key === 's3Prefix') return raw.replace(/^\/+|\/+$/g, '') || null;
  const bounds = integerBounds[key];
  if (bounds) {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `expected a whole number, got ${JSON.stringify(raw)}`);
    const n = Number(raw.trim());
    if (n < bounds[0] || n > bounds[1]) throw new ConfigError(name, `${n} is outside ${bounds[0]}..${bounds[1]}`);
    return n;
  }
  if (key === 'databaseUrl') return checkUrl(name, raw, ['postgres', 'postgresql']);
  if (key === 'upstreamOpenai' || key === 'upstreamAnthropic')
    return checkUrl(name, raw, ['http', 'https'], 'base URL');
  if (key === 'allowedHosts') {
    const names = raw
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== '');
    if (names.includes('*')) return '*';
    const bad = names.find((h) => !/^[a-z0-9.:_-]+$/.test(h));
    if (bad !== undefined) throw new ConfigError(name, `not a host name: ${JSON.stringify(bad)}`);
    return names;
  }
  if (key === 'publicUrl' || key === 'replicaUrl') return checkUrl(name, raw, ['http', 'https']).replace(/\/$/, '');
  if (key === 'host' && /\s/.test(raw))
    throw new ConfigError(name, `not a host name or address: ${JSON.stringify(raw)}`);
  return raw;
}

/** raw, when it is a URL of one of these schemes; a password in it never reaches the message. */
function checkUrl(name: string, raw: string, schemes: readonly string[], what = 'URL'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `not a URL: ${JSON.stringify(redact(raw))}`);
  }
  if (!schemes.includes(url.protocol.slice(0, -1))) {
    throw new ConfigError(
      name,
      `expected a ${schemes.map((s) => `${s}://`).join(' or ')} ${what}, got ${url.protocol}//`,
    );
  }
  return raw;
}

const MS_PER = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** A retention bound: "30d", "12h", "90m" → milliseconds; "off" → null (keep everything). */
export function parseRetention(raw: string): number | null {
  const text = raw.trim().toLowerCase();
  if (text === 'off') return null;
  const match = /^(\d{1,6})([dhm])$/.exec(text);
  if (!match || Number(match[1]) === 0)
    throw new RangeError(`expected a duration such as 30d, 12h or 90m, or off; got ${JSON.stringify(raw)}`);
  return Number(match[1]) * MS_PER[match[2] as keyof typeof MS_PER];
}

/**
 * Per-tenant retention: "t1=7d,t2=90d,t3=off"; "=7d" is spans stored without a tenant. A
 * tenant's name may hold "=": the last one splits.
 */
export function parseTenantRetention(raw: string): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const entry of raw.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const at = entry.lastIndexOf('=');
    if (at < 0) throw new RangeError(`expected tenant=duration, got ${JSON.stringify(entry)}`);
    out.set(entry.slice(0, at).trim(), parseRetention(entry.slice(at + 1)));
  }
  return out;
}

/** Hides a password in a database URL before it reaches a message or a log. */
export function redact(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return databaseUrl.replace(/:[^:@/]*@/, ':***@');
  }
}
