/** Exit codes and the error a command throws to end with one. */
export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
