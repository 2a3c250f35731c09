/**
 * The CLI's own failures, each with the exit code a script branches on, and what to do next
 * (`hint`, printed on its own line). Domain errors from the core (`VersionRequestError`,
 * `PageChangedError`...) exit 1 with their code and message.
 */
export abstract class CliError extends Error {
  abstract readonly exitCode: number;
  /** What to do next, when the message alone does not say. */
  readonly hint: string | undefined;

  constructor(message: string, options: { cause?: unknown; hint?: string | undefined } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options.hint;
  }
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
  /** What to print as the result anyway (e.g. the endpoint's JSON answer). */
  readonly detail: unknown;

  constructor(
    message: string,
    options: { detail?: unknown; hint?: string | undefined; cause?: unknown } = {},
  ) {
    super(message, options);
    this.detail = options.detail;
  }
}
