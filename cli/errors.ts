/**
 * The CLI's own failures, each with the exit code a script branches on. Domain errors from the
 * core (`VersionRequestError`, `PageChangedError`...) exit 1 with their code and message.
 */
export abstract class CliError extends Error {
  abstract readonly exitCode: number;
}

/** The command line is wrong: the message says how; help is printed. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  readonly exitCode = 2;
}

/** The service cannot be reached: npm start not running, a stack not found or too old. */
export class TargetError extends CliError {
  override readonly name = 'TargetError';
  readonly exitCode = 3;
}

/** The operation ran and failed (a revalidation refused, a letter not found). */
export class OperationError extends CliError {
  override readonly name = 'OperationError';
  readonly exitCode = 1;
  constructor(
    message: string,
    /** What to print as the result anyway (e.g. the endpoint's JSON answer). */
    readonly detail?: unknown,
  ) {
    super(message);
  }
}
