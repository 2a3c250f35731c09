/**
 * The command table: each command's usage, options and handler. A handler gets the parsed
 * arguments and a `Context` (target, clock, output) and returns data plus its human rendering;
 * `run.ts` does the parsing, the target, `--json` and the exit codes.
 */
import type { ParseArgsConfig } from 'node:util';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { epochSeconds, type Clock } from '../lambda/core/clock.js';
import { actorOf } from './actor.js';
import { cdnInvalidatorFor } from './cdn.js';
import { deleteDeadLetter, listDeadLetters, redriveDeadLetters } from './commands/dlq.js';
import { inspect } from './commands/inspect.js';
import { hold, pageOpsDeps, parseDuration, release, rollback } from './commands/page-ops.js';
import { ENDPOINT_COMMANDS } from './commands/endpoint.js';
import { failed, stuck } from './commands/status.js';
import { budgetView, formatBudget } from './commands/budget.js';
import { str } from './values.js';
import { UsageError } from './errors.js';
import * as format from './format.js';
import { cacheKeyOf } from './page-key.js';
import type { Progress } from './progress.js';
import type { Target } from './target.js';

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Context {
  readonly target: Target;
  readonly clock: Clock;
  readonly env: Record<string, string | undefined>;
  /** Side notes (the local CDN purge), never on stdout: `--json` output stays parseable. */
  readonly note: (line: string) => void;
  readonly fetch: typeof fetch;
  /** A progress line (`revalidate status --wait`): redrawn on a terminal, plain lines elsewhere. */
  readonly progress: Progress;
  /** The caller's AWS credentials, for a SigV4-signed revalidation (deployed stacks). */
  readonly credentials: () => AwsCredentialIdentityProvider;
  /** Who the AWS credentials are (an ARN), for a deployed stack; undefined locally. */
  readonly caller: () => Promise<string | undefined>;
}

export interface Output {
  readonly data: unknown;
  readonly text: string;
}

export interface Command {
  readonly usage: string;
  readonly summary: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  /** Positionals after the command name: how many are required. */
  readonly positionals: number;
  run(args: { positionals: string[]; values: Values }, ctx: Context): Promise<Output>;
}

function duration(values: Values, name: string): number | undefined {
  const text = str(values, name);
  if (text === undefined) return undefined;
  const seconds = parseDuration(text);
  if (seconds === undefined) {
    throw new UsageError(`--${name} must be a duration like 30m, 2h or 1d, got "${text}"`);
  }
  return seconds;
}

/** Who asked (`--by`, `ISR_ACTOR`, the AWS caller, the OS user), for META and the lease owner. */
const actor = (ctx: Context, values: Values): Promise<string> =>
  actorOf({ by: str(values, 'by'), env: ctx.env, caller: ctx.caller });

const pageCommand = (ctx: Context, url: string, values: Values) =>
  cacheKeyOf(url, str(values, 'tenant'), ctx.target.settings);

const opsOf = (ctx: Context) =>
  pageOpsDeps(ctx.target, cdnInvalidatorFor(ctx.target, ctx.note), ctx.clock);

const tenant = { tenant: { type: 'string' } } as const;
/** Options of the commands that record who asked. */
const pageOp = { ...tenant, by: { type: 'string' } } as const;

export const COMMANDS: Record<string, Command> = {
  inspect: {
    usage: 'inspect <url> [--tenant <t>]',
    summary: 'cache key, pk, META and freshness, LOCK, REQ# rows, versions, body size and etag',
    options: tenant,
    positionals: 1,
    run: async ({ positionals, values }, ctx) => {
      const found = await inspect(ctx, pageCommand(ctx, positionals[0] ?? '', values));
      return { data: found, text: format.formatInspection(found) };
    },
  },
  stuck: {
    usage: 'stuck [--limit <n>]',
    summary: 'STARTED regenerations past their expected completion, and abandoned LOCKs',
    options: { limit: { type: 'string' } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const rows = await stuck({ ...ctx, limit: limitOf(values) });
      return { data: rows, text: format.formatStatusRows(rows, 'stuck') };
    },
  },
  failed: {
    usage: 'failed [--limit <n>]',
    summary: 'FAILED regenerations, and pages whose renders fail (retried or broken), with why',
    options: { limit: { type: 'string' } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const rows = await failed({ ...ctx, limit: limitOf(values) });
      return { data: rows, text: format.formatStatusRows(rows, 'failed') };
    },
  },
  budget: {
    usage: 'budget [--tenant <t>] [--limit <n>]',
    summary: "the regeneration budget, this minute's regenerations, and the pages waiting past it",
    options: { ...tenant, limit: { type: 'string' } },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const view = await budgetView({
        ...ctx,
        tenant: str(values, 'tenant'),
        limit: limitOf(values),
      });
      return { data: view, text: formatBudget(view, epochSeconds(ctx.clock)) };
    },
  },
  dlq: {
    usage: 'dlq list | dlq redrive [--id <messageId>] | dlq delete --id <messageId>',
    summary: 'dead letters: list them, send them back to the regeneration queue, or delete one',
    options: { id: { type: 'string' } },
    positionals: 1,
    run: async ({ positionals, values }, ctx) => {
      const id = str(values, 'id');
      switch (positionals[0]) {
        case 'list': {
          const letters = await listDeadLetters(ctx);
          return { data: letters, text: format.formatDeadLetters(letters) };
        }
        case 'redrive': {
          const result = await redriveDeadLetters(ctx, id);
          return { data: result, text: format.formatRedrive(result) };
        }
        case 'delete': {
          if (id === undefined) throw new UsageError('dlq delete needs --id <messageId>');
          const result = await deleteDeadLetter(ctx, id);
          return { data: result, text: `deleted ${result.deleted}` };
        }
        default:
          throw new UsageError(`dlq needs list, redrive or delete, got "${positionals[0]}"`);
      }
    },
  },
  rollback: {
    usage: 'rollback <url> [--to <version>] [--hold <duration>] [--by <who>] [--tenant <t>]',
    summary: 'serve a kept version again (default: the one before the live one), purge the CDN',
    options: { ...pageOp, to: { type: 'string' }, hold: { type: 'string' } },
    positionals: 1,
    run: async ({ positionals, values }, ctx) => {
      const result = await rollback(opsOf(ctx), {
        cacheKey: pageCommand(ctx, positionals[0] ?? '', values),
        to: str(values, 'to'),
        holdSeconds: duration(values, 'hold'),
        actor: await actor(ctx, values),
      });
      return { data: result, text: format.formatRollback(result, epochSeconds(ctx.clock)) };
    },
  },
  hold: {
    usage: 'hold <url> --for <duration> [--by <who>] [--tenant <t>]',
    summary: 'stop regenerating a page (served as it is) for a while; record who; purge the CDN',
    options: { ...pageOp, for: { type: 'string' } },
    positionals: 1,
    run: async ({ positionals, values }, ctx) => {
      const holdSeconds = duration(values, 'for');
      if (holdSeconds === undefined) throw new UsageError('hold needs --for <duration>');
      const result = await hold(opsOf(ctx), {
        cacheKey: pageCommand(ctx, positionals[0] ?? '', values),
        holdSeconds,
        actor: await actor(ctx, values),
      });
      return { data: result, text: format.formatHold(result, epochSeconds(ctx.clock)) };
    },
  },
  release: {
    usage: 'release <url> [--by <who>] [--tenant <t>]',
    summary: 'lift a hold: the page regenerates as its freshness says; record who; purge the CDN',
    options: pageOp,
    positionals: 1,
    run: async ({ positionals, values }, ctx) => {
      const result = await release(opsOf(ctx), {
        cacheKey: pageCommand(ctx, positionals[0] ?? '', values),
        actor: await actor(ctx, values),
      });
      return { data: result, text: format.formatRelease(result) };
    },
  },
  ...ENDPOINT_COMMANDS,
};

function limitOf(values: Values): number | undefined {
  const text = str(values, 'limit');
  if (text === undefined) return undefined;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit <= 0)
    throw new UsageError(`--limit must be a positive integer, got "${text}"`);
  return limit;
}
