/**
 * What a read command opens: the store from the same configuration as the server, closed
 * when the command ends. With the embedded database, stop `tapedeck serve` first: one
 * PGlite data directory must not be opened by two processes at once.
 */
import { loadConfig, type Config } from '../config.js';
import { silentLogger } from '../logger.js';
import { openStore, type Store } from '../open-store.js';
import { flagsOf } from './flags.js';

export async function withStore<T>(
  options: Record<string, unknown>,
  work: (store: Store, config: Config) => Promise<T>,
): Promise<T> {
  const config = loadConfig(process.env, flagsOf(options));
  const store = await openStore(config, silentLogger());
  try {
    return await work(store, config);
  } finally {
    await store.close();
  }
}

export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
