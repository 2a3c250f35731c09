/**
 * What to do next when the revalidate endpoint refuses a call or cannot be reached (issue 35,
 * item 6): one line per answer the CLI can get, so an operator acts on it without reading code.
 * The AWS behaviour behind the deployed answers: a function URL with `AWS_IAM` auth answers 403
 * to a caller without `lambda:InvokeFunctionUrl`
 * (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html), and 429 once the function is at
 * its reserved concurrency (https://repost.aws/knowledge-center/lambda-troubleshoot-throttling).
 */
import { SignatureRefusal } from '../lambda/core/revalidate/webhook-signature.js';
import type { RevalidateResult } from './commands/revalidate.js';
import type { Target } from './target.js';

/** The call a refusal answered: a revalidation (POST, with its key) or a status read. */
export type RefusedCall =
  | { readonly kind: 'revalidate'; readonly key: string }
  | { readonly kind: 'status'; readonly effectId: string };

type Where = Pick<Target, 'kind' | 'name'>;

const fieldOf = (body: unknown, name: string): string | undefined => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

/** "run the same command again with --key k": a retry the endpoint answers once, however often. */
const again = (call: RefusedCall, when = 'in a few seconds') =>
  call.kind === 'revalidate'
    ? `run the same command again with --key ${call.key} ${when} (one key is applied at most once)`
    : `run the same command again ${when}`;

/** The next step after a 401: which secret, or which clock, is wrong. */
function unauthorized(reason: string | undefined, where: Where): string {
  const secret =
    where.kind === 'local'
      ? 'the value npm start was started with (its ISR_REVALIDATE_SECRET)'
      : "the value of the stack's revalidateWebhookSecret";
  switch (reason) {
    case SignatureRefusal.MissingSignature:
    case SignatureRefusal.MissingTimestamp:
      return `the endpoint requires a signature: set ISR_REVALIDATE_SECRET in this shell to ${secret}`;
    case SignatureRefusal.Mismatch:
      return `ISR_REVALIDATE_SECRET in this shell is not the secret the endpoint checks: set it to ${secret}`;
    case SignatureRefusal.TimestampOutOfRange:
      return "this machine's clock is more than 300 s from the service's: set it right (NTP), then run the command again";
    case 'no-iam-principal':
      return 'the call reached the function unsigned: the stack expects SigV4 (your AWS credentials), so check AWS_PROFILE';
    default:
      return `the endpoint refused the signature (${reason ?? 'no reason given'}): check ISR_REVALIDATE_SECRET against ${secret}`;
  }
}

/** One line saying what to do after the endpoint answered `result` (a status of 300 or more). */
export function nextStep(result: RevalidateResult, call: RefusedCall, where: Where): string {
  const { status, receipt: body } = result;
  const retryAfter = result.retryAfter === undefined ? undefined : `in ${result.retryAfter} s`;
  switch (status) {
    case 400:
    case 413:
      return `fix ${fieldOf(body, 'field') ?? 'the request'}: ${fieldOf(body, 'message') ?? 'see the answer above'}`;
    case 401:
      return unauthorized(fieldOf(body, 'reason'), where);
    case 403:
      return fieldOf(body, 'error') === 'revalidation-off'
        ? 'npm start listens beyond loopback without a secret: restart it with ISR_REVALIDATE_SECRET set, and set the same value in this shell'
        : `your AWS identity may not call ${where.name}'s revalidate URL: grant it lambda:InvokeFunctionUrl (IsrService.grantRevalidate(role)), or use a profile that has it (AWS_PROFILE)`;
    case 404:
      return call.kind === 'status'
        ? `no revalidation has effect id ${call.effectId}: check the id its 202 printed (a status is kept 7 days)`
        : where.kind === 'local'
          ? 'nothing answers revalidations at that URL: restart npm start (its endpoints.json names the URL)'
          : `nothing answers revalidations at that URL: check ${where.name}'s RevalidateUrl output (deploy this version of the stack)`;
    case 409:
      return fieldOf(body, 'error') === 'in-progress'
        ? `a call with this key is still being applied: ${again(call, retryAfter)}`
        : 'this Idempotency-Key was used before with another request (the diff above); nothing was applied: run it without --key for a new one';
    case 429:
      return `the revalidate function is at its concurrency limit (revalidateReservedConcurrency): ${again(call, retryAfter)}`;
    case 503:
      return `the service could not apply it now and kept nothing: ${again(call, retryAfter)}`;
    default:
      return status >= 500
        ? `the revalidate function failed (${where.kind === 'local' ? "npm start's output" : 'its log group'} has why): ${again(call)}`
        : `unexpected HTTP ${status}: see the answer above`;
  }
}

/** What to do when the endpoint cannot be reached at all (the fetch itself failed). */
export function unreachableStep(url: string, error: unknown, where: Where): string {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  const why = cause === undefined ? '' : ` (${cause})`;
  return where.kind === 'local'
    ? `cannot reach ${url}${why}: is npm start still running? Start it again (a stopped one that was killed leaves its endpoints.json in ${where.name})`
    : `cannot reach ${url}${why}: check your network, and ${where.name}'s RevalidateUrl output`;
}
