/**
 * `tapedeck replay --cassette FILE`: a replay straight from a cassette file, with no database
 * and no route to a model provider (testing/cassette-server.ts). Prints one JSON line once
 * listening (the fields of POST /v1/replays, base URLs absolute), then serves until SIGTERM or
 * SIGINT. A cassette that fails its audit exits 1 before anything listens.
 */
import type { Command } from 'commander';
import { renderJson } from '../json/canonical.js';
import { MAX_SPEED } from '../replay/playback.js';
import { startCassetteServer } from '../testing/cassette-server.js';
import { CliError, EXIT } from './cli-error.js';
import { addLimitOptions, limitsOf, refusalsAsCliErrors } from './cassette-commands.js';
import { print } from './context.js';

type Options = Record<string, string | boolean | undefined>;

export function registerReplayCommand(program: Command): void {
  addLimitOptions(
    program
      .command('replay')
      .description('serve a replay straight from a cassette file: no database, no model')
      .requiredOption('--cassette <file>', 'the cassette to replay'),
  )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on (0: a free one)', '0')
    .option('--mode <mode>', 'strict or loose', 'strict')
    .option('--timing <timing>', 'fast (default) or recorded: stream chunks paced by the recording', 'fast')
    .option('--speed <x>', 'recorded timing scaled: 2 plays twice as fast', '1')
    .option('--run <run>', "the run to replay (default: the cassette's root run)")
    .action(async (options: Options) => {
      const port = Number(options.port);
      if (!/^\d+$/.test(String(options.port)) || port > 65535)
        throw new CliError('--port must be 0 to 65535', EXIT.usage);
      if (options.mode !== 'strict' && options.mode !== 'loose')
        throw new CliError('--mode must be strict or loose', EXIT.usage);
      if (options.timing !== 'fast' && options.timing !== 'recorded')
        throw new CliError('--timing must be recorded or fast', EXIT.usage);
      const speed = Number(options.speed);
      if (!Number.isFinite(speed) || speed <= 0 || speed > MAX_SPEED)
        throw new CliError(`--speed must be a number above 0 and at most ${MAX_SPEED}`, EXIT.usage);
      const server = await refusalsAsCliErrors(() =>
        startCassetteServer({
          cassette: options.cassette as string,
          host: options.host as string,
          port,
          mode: options.mode as 'strict' | 'loose',
          timing: options.timing as 'fast' | 'recorded',
          speed,
          run: options.run as string | undefined,
          limits: limitsOf(options),
        }),
      );
      // Listening before the line is printed: a signal with no listener ends the process at once.
      const stopped = new Promise<void>((resolve) => {
        process.once('SIGTERM', resolve);
        process.once('SIGINT', resolve);
      });
      print(renderJson(server.replay));
      await stopped;
      await server.close();
    });
}
