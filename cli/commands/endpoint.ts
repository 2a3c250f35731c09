/**
 * `isr revalidate` and `isr revalidate status`: the commands that call the revalidate endpoint
 * (the others read the table and queues directly). Every refusal, and an endpoint that cannot be
 * reached, ends in an error that says what to do next (`../refusals.ts`).
 */
import type { Command, Context, Values } from '../commands.js';
import { OperationError, TargetError, UsageError } from '../errors.js';
import * as format from '../format.js';
import { nextStep, unreachableStep, type RefusedCall } from '../refusals.js';
import { str } from '../values.js';
import {
  buildRevalidateRequest,
  buildStatusRequest,
  sendRevalidate,
  type RevalidateResult,
  type SignedRequest,
} from './revalidate.js';

const list = (values: Values, name: string): string[] => {
  const value = values[name];
  return Array.isArray(value) ? value : [];
};

/** Polls between two status reads while waiting (each read is one signed GET). */
const WAIT_POLL_MS = 1_000;
/** How long `--wait` waits at most: well past any revalidation's marking. */
const WAIT_LIMIT_MS = 15 * 60_000;

export const ENDPOINT_COMMANDS: Record<string, Command> = {
  revalidate: {
    usage:
      'revalidate --path <p> [--path ...] --tag <t> [--tag ...] [--tenant <t>] [--mode stale|expire] [--regenerate] [--dry-run] [--key <idempotency key>]',
    summary:
      'POST to the revalidation endpoint (SigV4 on a stack; HMAC with ISR_REVALIDATE_SECRET)',
    options: {
      tenant: { type: 'string' },
      path: { type: 'string', multiple: true },
      tag: { type: 'string', multiple: true },
      mode: { type: 'string' },
      regenerate: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      key: { type: 'string' },
    },
    positionals: 0,
    run: async ({ values }, ctx) => {
      const mode = str(values, 'mode');
      if (mode !== undefined && mode !== 'stale' && mode !== 'expire') {
        throw new UsageError(`--mode must be stale or expire, got "${mode}"`);
      }
      const input = {
        paths: list(values, 'path'),
        tags: list(values, 'tag'),
        tenant: str(values, 'tenant'),
        mode,
        regenerate: values.regenerate === true ? true : undefined,
        dryRun: values['dry-run'] === true ? true : undefined,
        idempotencyKey: str(values, 'key'),
      } as const;
      if (input.paths.length + input.tags.length === 0) {
        throw new UsageError('revalidate needs at least one --path or --tag');
      }
      const request = await buildRevalidateRequest(revalidateUrlOf(ctx), input, signingOf(ctx));
      const call = { kind: 'revalidate', key: request.headers['idempotency-key'] ?? '' } as const;
      const result = await callEndpoint(ctx, request);
      const text = format.formatRevalidate(result);
      if (result.status >= 300) throw refused('revalidation', result, call, ctx, text);
      return { data: result, text };
    },
  },
  'revalidate status': {
    usage: 'revalidate status <effect_id> [--wait]',
    summary:
      "a revalidation's status by its effect id (same auth as revalidate); --wait: until done",
    options: { wait: { type: 'boolean' } },
    positionals: 1,
    run: async ({ positionals, values }, ctx) => {
      const effectId = positionals[0] ?? '';
      if (!/^rv_[0-9a-f]{32}$/.test(effectId)) {
        throw new UsageError(`an effect id is rv_ and 32 hex digits, got "${effectId}"`);
      }
      const result = await revalidationStatus(ctx, effectId, values.wait === true);
      const text = format.formatRevalidationStatus(result);
      if (result.status >= 300) {
        throw refused('status', result, { kind: 'status', effectId }, ctx, text);
      }
      return { data: result.receipt, text };
    },
  },
};

/** The refusal as an error: its status and reason, the answer printed, the next step. */
function refused(
  what: string,
  result: RevalidateResult,
  call: RefusedCall,
  ctx: Context,
  text: string,
): OperationError {
  const body = result.receipt as Record<string, unknown> | null;
  const reason = body?.reason ?? body?.error;
  return new OperationError(
    `${what} refused: HTTP ${result.status}${typeof reason === 'string' ? ` (${reason})` : ''}`,
    { detail: { data: result, text }, hint: nextStep(result, call, ctx.target) },
  );
}

/** Sends one request; no answer at all is the service not reached (exit 3), with what to check. */
async function callEndpoint(ctx: Context, request: SignedRequest): Promise<RevalidateResult> {
  try {
    return await sendRevalidate(request, ctx.fetch);
  } catch (error) {
    throw new TargetError(`cannot reach ${request.url}`, {
      cause: error,
      hint: unreachableStep(request.url, error, ctx.target),
    });
  }
}

/** The status once, or (`wait`) until it is `done`: a progress line each poll, redrawn on a TTY. */
async function revalidationStatus(ctx: Context, effectId: string, wait: boolean) {
  const deadline = ctx.clock.now() + WAIT_LIMIT_MS;
  try {
    for (;;) {
      const request = await buildStatusRequest(revalidateUrlOf(ctx), effectId, signingOf(ctx));
      const result = await callEndpoint(ctx, request);
      const state = (result.receipt as { state?: unknown } | null)?.state;
      if (!wait || result.status !== 200 || state === 'done' || ctx.clock.now() >= deadline) {
        return result;
      }
      ctx.progress.update(format.formatRevalidationStatus(result).split('\n')[0] ?? '');
      await ctx.clock.sleep(WAIT_POLL_MS);
    }
  } finally {
    ctx.progress.done();
  }
}

/** The target's revalidation endpoint. @throws OperationError when it has none */
function revalidateUrlOf(ctx: Context): string {
  const url = ctx.target.revalidateUrl;
  if (url === undefined) {
    throw new OperationError(
      `${ctx.target.name} has no revalidation endpoint (no RevalidateUrl output)`,
    );
  }
  return url;
}

/** How a request to the endpoint is signed: SigV4 on a stack, HMAC with ISR_REVALIDATE_SECRET. */
const signingOf = (ctx: Context) => ({
  hmacSecret: ctx.env.ISR_REVALIDATE_SECRET || undefined,
  sigv4:
    ctx.target.kind === 'stack'
      ? { region: ctx.target.region, credentials: ctx.credentials() }
      : undefined,
  now: new Date(ctx.clock.now()),
});
