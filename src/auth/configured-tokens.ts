/**
 * @module auth/configured-tokens
 * The configured credentials: TAPEDECK_TOKENS (or --tokens) and the file TAPEDECK_TOKENS_FILE
 * (or --tokens-file) names, read together at start. A mistake in either fails start-up with a
 * ConfigError naming the setting and the entry, never the secret.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config.js';
import { type ConfiguredToken, parseTokenEntries, TokenListError } from './credential.js';

export function configuredTokens(settings: { tokens: string | null; tokensFile: string | null }): ConfiguredToken[] {
  let text = '';
  try {
    const fromFile = settings.tokensFile === null ? '' : readTokensFile(settings.tokensFile);
    text = [settings.tokens ?? '', fromFile].join('\n');
    return parseTokenEntries(
      text,
      settings.tokensFile && !settings.tokens ? 'TAPEDECK_TOKENS_FILE' : 'TAPEDECK_TOKENS',
    );
  } catch (error) {
    if (error instanceof TokenListError) throw new ConfigError('TAPEDECK_TOKENS', error.message);
    throw error;
  }
}

function readTokensFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'TAPEDECK_TOKENS_FILE',
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
}

/** Whether a listen address reaches this machine only. */
export function isLoopbackAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
