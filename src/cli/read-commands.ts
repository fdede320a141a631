import type { Command } from 'commander';

/** Commands that read the store (runs, tape, ...); registered in later changes. */
export function registerReadCommands(_program: Command): void {}
