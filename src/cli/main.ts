#!/usr/bin/env -S node --max-semi-space-size=8
/**
 * @module cli/main
 * The `tapedeck` binary. Every command reads the same configuration as the server (flags,
 * then TAPEDECK_* environment, then defaults). Exit codes: 0 success, 1 failure,
 * 2 usage or configuration error, 3 not found.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { registerServe } from './serve.js';
import { registerReadCommands } from './read-commands.js';
import { registerCompareCommands } from './compare-commands.js';
import { registerRunCommands } from './run-commands.js';
import { registerCassetteCommands } from './cassette-commands.js';
import { registerReplayCommand } from './replay-command.js';
import { registerMcp } from './mcp.js';
import { CliError, EXIT } from './cli-error.js';

export function buildProgram(): Command {
  const program = new Command('tapedeck')
    .description('Record, replay and compare LLM agent runs from their OpenTelemetry spans.')
    .showHelpAfterError()
    .exitOverride();
  registerServe(program);
  registerReadCommands(program);
  registerCompareCommands(program);
  registerRunCommands(program);
  registerCassetteCommands(program);
  registerReplayCommand(program);
  registerMcp(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return process.exitCode === undefined ? EXIT.ok : Number(process.exitCode);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed help, the version or the usage error. Help asked for
      // (--help, `help`) exits 0; help shown because no command was given is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`tapedeck: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof CliError) {
      process.stderr.write(`tapedeck: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`tapedeck: ${(error as Error)?.message ?? String(error)}\n`);
    return EXIT.failure;
  }
}

// `tapedeck runs --json | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

main(process.argv).then((code) => {
  process.exitCode = code;
});
