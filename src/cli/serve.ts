/**
 * `tapedeck serve`: runs the OTLP receivers and the API until SIGTERM or SIGINT, then drains
 * in-flight requests and exits.
 */
import v8 from 'node:v8';
import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startTapedeck } from '../server.js';
import { isLoopbackAddress } from '../auth/configured-tokens.js';
import { addConfigOptions, flagsOf } from './flags.js';

/** What the start banner says about credentials: an open server says so, loudly off loopback. */
export function authLine(open: boolean, host: string): string {
  if (!open) return 'credentials required (Authorization: Bearer <token>)';
  return isLoopbackAddress(host)
    ? 'OPEN: no credentials configured; anyone on this machine can read and write everything'
    : `OPEN (--allow-open): no credentials configured; anyone who can reach ${host} can read and write everything`;
}

export function registerServe(program: Command): void {
  const serve = program.command('serve').description('receive OTLP on gRPC and HTTP and serve the API');
  addConfigOptions(serve)
    .addOption(new Option('--host <host>', 'interface to bind (env TAPEDECK_HOST, default 127.0.0.1)'))
    .addOption(new Option('--http-port <port>', 'OTLP/HTTP and API port (env TAPEDECK_HTTP_PORT, default 4318)'))
    .addOption(new Option('--grpc-port <port>', 'OTLP/gRPC port (env TAPEDECK_GRPC_PORT, default 4317)'))
    .addOption(
      new Option(
        '--max-body-bytes <n>',
        'request body bound, received and decompressed (env TAPEDECK_MAX_BODY_BYTES, default 64 MiB)',
      ),
    )
    .addOption(
      new Option(
        '--max-inflight-requests <n>',
        'export requests handled at once (env TAPEDECK_MAX_INFLIGHT_REQUESTS, default 32)',
      ),
    )
    .addOption(
      new Option(
        '--max-records-per-request <n>',
        'spans or log records per export request (env TAPEDECK_MAX_RECORDS_PER_REQUEST, default 65536)',
      ),
    )
    .addOption(
      new Option(
        '--queue-timeout-ms <n>',
        'how long an export request may wait for its turn (env TAPEDECK_QUEUE_TIMEOUT_MS, default 5000)',
      ),
    )
    .addOption(
      new Option(
        '--body-timeout-ms <n>',
        'how long an OTLP/HTTP or replay call body may take to arrive (env TAPEDECK_BODY_TIMEOUT_MS, default 30000)',
      ),
    )
    .addOption(new Option('--payload-threshold-bytes <n>', 'offload values larger than this (default 262144)'))
    .addOption(new Option('--tape-max-bytes <n>', 'payload bytes resolve=true inlines per tape (default 8 MiB)'))
    .addOption(new Option('--query-deadline-ms <n>', 'budget per read request (default 10000)'))
    .addOption(
      new Option(
        '--read-concurrency <n>',
        'read API requests worked on at once (env TAPEDECK_READ_CONCURRENCY, default 4)',
      ),
    )
    .addOption(
      new Option(
        '--replay-concurrency <n>',
        'replay requests worked on at once (env TAPEDECK_REPLAY_CONCURRENCY, default 4)',
      ),
    )
    .addOption(
      new Option(
        '--read-queue-timeout-ms <n>',
        'how long a read or replay request may wait for a slot (env TAPEDECK_READ_QUEUE_TIMEOUT_MS, default 5000)',
      ),
    )
    .addOption(new Option('--pricing <file>', 'per-model price table (JSON)'))
    .addOption(new Option('--shutdown-grace-ms <n>', 'how long SIGTERM waits for in-flight requests (default 10000)'))
    .addOption(
      new Option(
        '--retention <age>',
        'delete spans that ended longer ago than this: 30d, 12h, 90m, or off (env TAPEDECK_RETENTION, default off)',
      ),
    )
    .addOption(
      new Option(
        '--retention-tenants <list>',
        'per-tenant retention, e.g. t1=7d,t2=90d,t3=off (env TAPEDECK_RETENTION_TENANTS)',
      ),
    )
    .addOption(
      new Option(
        '--tokens <entries>',
        'credentials name:secret:role[:tenant], comma-separated (env TAPEDECK_TOKENS; prefer the env or a file: flags show in ps)',
      ),
    )
    .addOption(new Option('--tokens-file <file>', 'credentials, one entry a line (env TAPEDECK_TOKENS_FILE)'))
    .addOption(
      new Option(
        '--allow-open',
        'serve with no credentials on an address other than loopback (env TAPEDECK_ALLOW_OPEN=1)',
      ),
    )
    .addOption(
      new Option(
        '--allowed-hosts <names>',
        'host names Host and Origin may name besides loopback, comma-separated; * for any (env TAPEDECK_ALLOWED_HOSTS)',
      ),
    )
    .addOption(
      new Option(
        '--public-url <url>',
        'the URL clients reach tapedeck by, for replay base_urls (env TAPEDECK_PUBLIC_URL)',
      ),
    )
    .addOption(
      new Option(
        '--replica-url <url>',
        'the URL other replicas on the same PostgreSQL database reach this one by, for shared replays (env TAPEDECK_REPLICA_URL)',
      ),
    )
    .addOption(
      new Option(
        '--derive <on|off>',
        'derive steps and runs as spans arrive; off: spans only, until `tapedeck reindex` (env TAPEDECK_DERIVE, default on)',
      ),
    )
    .addOption(
      new Option(
        '--upstream-openai <url>',
        'where forks send live OpenAI calls, base URL ending in /v1 (env TAPEDECK_UPSTREAM_OPENAI; key in TAPEDECK_UPSTREAM_OPENAI_KEY)',
      ),
    )
    .addOption(
      new Option(
        '--upstream-anthropic <url>',
        'where forks send live Anthropic calls (env TAPEDECK_UPSTREAM_ANTHROPIC; key in TAPEDECK_UPSTREAM_ANTHROPIC_KEY)',
      ),
    )
    .addOption(new Option('--mcp', 'serve the MCP tools at /mcp over streamable HTTP (env TAPEDECK_MCP=on)'))
    .action(async (options: Record<string, string>) => {
      const config = loadConfig(process.env, flagsOf(options));
      // V8 lets the heap grow up to 4x what survived the last full collection before it
      // collects again; an export request's decoded batch survives its awaits, so under load
      // the receiver's RSS jumped now and then. Growing by 2x at most keeps it steady at the
      // same throughput; with derive off, which works on two large batches at once, by 1.5x
      // (docs/benchmarks.md). Read at every collection, so set here, before any load.
      v8.setFlagsFromString(`--heap-growing-percent=${config.derive ? 100 : 50}`);
      const logger = createLogger();
      // A stray rejection is a bug to log, never a reason to drop what senders are retrying.
      process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
      const running = await startTapedeck(config, logger);
      // Listening before the ready lines are printed: whoever reads them may signal at once,
      // and a signal with no listener yet ends the process without draining.
      const stopped = new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          logger.info({ signal }, 'shutting down: draining in-flight requests');
          running.close().then(resolve, (error: unknown) => {
            logger.error({ err: error }, 'shutdown failed');
            process.exitCode = 1;
            resolve();
          });
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
      const shown = running.host === '0.0.0.0' || running.host === '::' ? 'localhost' : running.host;
      process.stdout.write(
        [
          'tapedeck is running',
          `  OTLP/gRPC   ${running.host}:${running.grpcPort}`,
          `  OTLP/HTTP   http://${shown}:${running.httpPort}/v1/traces  (and /v1/logs)`,
          `  console     http://${shown}:${running.httpPort}/`,
          `  API         http://${shown}:${running.httpPort}/v1/runs`,
          ...(config.mcp ? [`  MCP         http://${shown}:${running.httpPort}/mcp`] : []),
          `  data        ${running.dataLocation}`,
          `  auth        ${authLine(running.credentials.open, running.host)}`,
          ...(config.derive
            ? []
            : ['  derive      off: spans and log records only; `tapedeck reindex` derives their steps and runs']),
          '',
          'Point your agent at it:',
          `  export OTEL_EXPORTER_OTLP_ENDPOINT=http://${shown}:${running.httpPort}`,
          `  # or, for gRPC exporters: OTEL_EXPORTER_OTLP_ENDPOINT=http://${shown}:${running.grpcPort}`,
          '',
        ].join('\n'),
      );
      await stopped;
      process.stdout.write('tapedeck stopped\n');
    });
}
