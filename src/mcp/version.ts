/**
 * @module mcp/version
 * The version tapedeck reports to MCP clients: package.json's, read once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-root.js';

let cached: string | undefined;

export function tapedeckVersion(): string {
  cached ??= (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string })
    .version;
  return cached;
}
