import { Option, type Command } from 'commander';
import { settings, type Config } from '../config.js';

/** Commander's attribute name for a flag: --http-port → httpPort. */
const attributeOf = (flag: string) => flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Commander's option values → the raw strings loadConfig validates, keyed by Config key. */
export function flagsOf(options: Record<string, unknown>): Partial<Record<keyof Config, string>> {
  const out: Partial<Record<keyof Config, string>> = {};
  for (const s of settings) {
    const value = options[attributeOf(s.flag)];
    if (typeof value === 'string') out[s.key] = value;
    // a switch given without a value (--mcp, --allow-open)
    else if (value === true) out[s.key] = 'on';
  }
  return out;
}

/** Config flags every command accepts. */
export function addConfigOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--database-url <url>', 'PostgreSQL URL (env TAPEDECK_DATABASE_URL); absent: embedded PGlite'),
    )
    .addOption(
      new Option(
        '--database-prepared-statements <on|off>',
        'prepare frequent statements on each PostgreSQL connection; off behind a pooler that cannot hold them (env TAPEDECK_DATABASE_PREPARED_STATEMENTS, default on)',
      ),
    )
    .addOption(new Option('--data-dir <dir>', 'local data directory (env TAPEDECK_DATA_DIR, default ./.tapedeck)'))
    .addOption(
      new Option(
        '--payload-store <kind>',
        'where large payloads are kept: fs, pg or s3 (env TAPEDECK_PAYLOAD_STORE, default fs)',
      ).choices(['fs', 'pg', 's3']),
    )
    .addOption(new Option('--s3-endpoint <url>', 'S3-compatible endpoint (env TAPEDECK_S3_ENDPOINT)'))
    .addOption(new Option('--s3-bucket <name>', 'bucket for --payload-store s3 (env TAPEDECK_S3_BUCKET)'))
    .addOption(new Option('--s3-prefix <prefix>', 'object key prefix (env TAPEDECK_S3_PREFIX)'))
    .addOption(
      new Option('--s3-force-path-style <on|off>', 'path-style bucket URLs (env TAPEDECK_S3_FORCE_PATH_STYLE)'),
    );
}
