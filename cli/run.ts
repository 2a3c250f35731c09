/**
 * `isr <command>`: parses the command line, resolves the target (local by default, `--stack`),
 * runs the command and prints its table (or `--json`). Exit codes: 0 done, 1 the operation
 * failed, 2 bad usage, 3 the service cannot be reached.
 */
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { systemClock, type Clock } from '../lambda/core/clock.js';
import { IsrError } from '../lambda/core/errors.js';
import { COMMANDS, type Command, type Context } from './commands.js';
import { CliError, OperationError, TargetError, UsageError } from './errors.js';
import { plainProgress, type Progress } from './progress.js';
import { destroyTarget, localTarget, stackTarget, type Target } from './target.js';

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Record<string, string | undefined>;
  readonly clock?: Clock | undefined;
  readonly fetch?: typeof fetch | undefined;
  /** @default plain lines through `err`, one per change (main.ts redraws one line on a TTY) */
  readonly progress?: Progress | undefined;
  /** @default the target from endpoints.json or `--stack` */
  readonly target?: ((stack: string | undefined) => Promise<Target>) | undefined;
}

const GLOBAL_OPTIONS = {
  stack: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    'usage: isr <command> [options]   (npm run isr -- <command> [options])',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'options for every command:',
    '  --stack <name>  a deployed stack (its CloudFormation outputs, your AWS credentials);',
    '                  default: the running `npm start` (<ISR_LOCAL_DATA_DIR or .local>/endpoints.json)',
    '  --json          print the result as JSON, for scripts',
    "  --help          this help, or a command's own: isr <command> --help",
    '',
    'exit codes: 0 done, 1 the operation failed, 2 bad usage, 3 the service cannot be reached',
  ].join('\n');
}

const commandHelp = (command: Command): string =>
  `usage: isr ${command.usage} [--stack <name>] [--json]\n\n${command.summary}`;

/** `revalidate status <id>` is the command `revalidate status`: two words, when the table has them. */
function withSubcommand(argv: readonly string[]): readonly string[] {
  const [first, second, ...rest] = argv;
  const both = `${first} ${second}`;
  return second !== undefined && both in COMMANDS ? [both, ...rest] : argv;
}

/** Runs one command line; resolves with the exit code. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = withSubcommand(argv);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(helpText());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.err(`isr: unknown command "${name}"\n\n${helpText()}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: [...rest],
      options: { ...GLOBAL_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    io.err(`isr ${name}: ${(error as Error).message}\n\n${commandHelp(command)}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.out(commandHelp(command));
    return 0;
  }
  if (positionals.length !== command.positionals) {
    io.err(
      `isr ${name}: expected ${command.positionals} argument(s), got ${positionals.length}\n\n${commandHelp(command)}`,
    );
    return 2;
  }
  const json = values.json === true;
  let target: Target | undefined;
  try {
    const stack = typeof values.stack === 'string' ? values.stack : undefined;
    target = await (io.target ?? defaultTarget(io.env))(stack);
    const ctx: Context = {
      target,
      clock: io.clock ?? systemClock,
      env: io.env,
      note: io.err,
      fetch: io.fetch ?? fetch,
      progress: io.progress ?? plainProgress(io.err),
      credentials: () => defaultProvider(),
    };
    const output = await command.run({ positionals, values }, ctx);
    io.out(json ? JSON.stringify(output.data, null, 2) : output.text);
    return 0;
  } catch (error) {
    return report(unreachable(error, target) ?? error, name, json, io);
  } finally {
    // A target handed in (tests) belongs to the caller.
    if (target !== undefined && io.target === undefined) destroyTarget(target);
  }
}

/** Connection failures of the SDK's clients: the service's stores cannot be reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/**
 * A store that cannot be reached is the service not reached (exit 3), with what to check. The
 * code is on the error, or in the message of the SDK's wrapper of one from another realm.
 */
function unreachable(error: unknown, target: Target | undefined): TargetError | undefined {
  const found = error as { code?: unknown; message?: unknown } | undefined;
  const code =
    typeof found?.code === 'string'
      ? found.code
      : /\b(E[A-Z]+)\b/.exec(typeof found?.message === 'string' ? found.message : '')?.[1];
  if (target === undefined || code === undefined || !UNREACHABLE.has(code)) return undefined;
  return new TargetError(`cannot reach ${target.name}'s stores (${code})`, {
    cause: error,
    hint:
      target.kind === 'local'
        ? 'is npm start still running? Start it again (its backends stop with it)'
        : 'check your network and AWS_REGION',
  });
}

function defaultTarget(env: Record<string, string | undefined>) {
  return (stack: string | undefined): Promise<Target> =>
    stack === undefined ? localTarget(env) : stackTarget(stack, new CloudFormationClient({}));
}

/** The error on stderr (JSON with `--json`), what to do next below it, and the exit code. */
function report(error: unknown, name: string, json: boolean, io: Io): number {
  if (error instanceof OperationError && isOutput(error.detail)) {
    io.out(json ? JSON.stringify(error.detail.data, null, 2) : error.detail.text);
  }
  const code =
    error instanceof IsrError ? error.code : error instanceof CliError ? error.name : 'error';
  const message = error instanceof Error ? error.message : String(error);
  const next = error instanceof CliError ? error.hint : undefined;
  io.err(
    json
      ? JSON.stringify({ error: code, message, ...(next === undefined ? {} : { next }) })
      : `isr ${name}: ${message}${error instanceof IsrError ? ` (${code})` : ''}` +
          (next === undefined ? '' : `\n  next: ${next}`),
  );
  if (error instanceof UsageError) io.err(`\n${commandHelp(COMMANDS[name])}`);
  return error instanceof CliError ? error.exitCode : 1;
}

const isOutput = (value: unknown): value is { data: unknown; text: string } =>
  typeof value === 'object' && value !== null && 'text' in value;
