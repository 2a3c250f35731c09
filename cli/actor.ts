/**
 * Who an operator's command records on the page (META's `held_by`, `released_by`,
 * `rolled_back_by`, and the seized lease's owner), so `isr inspect` says who held, released or
 * rolled back a page: `--by`, else `ISR_ACTOR`, else, against a deployed stack, the AWS caller
 * (the ARN whose credentials make the writes), else the OS user.
 */
import { userInfo } from 'node:os';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { UsageError } from './errors.js';
import type { Target } from './target.js';

/** Longest actor recorded: an ARN of an assumed role with its session name fits. */
export const MAX_ACTOR_LENGTH = 256;

/** Printable, no control characters: it is shown in tables and logs as is. */
const ACTOR = /^[\x20-\x7e\u00a0-\uffff]+$/u;

export interface ActorSources {
  /** `--by`, as typed. */
  readonly by: string | undefined;
  readonly env: Record<string, string | undefined>;
  /** The AWS caller's ARN; undefined locally (npm start's stores take no identity). */
  readonly caller: () => Promise<string | undefined>;
}

/** @throws UsageError when `--by` (or `ISR_ACTOR`) is empty, too long or not printable */
export async function actorOf(sources: ActorSources): Promise<string> {
  const given = sources.by ?? sources.env.ISR_ACTOR;
  if (given !== undefined) return checked(given.trim(), sources.by === undefined);
  return (await sources.caller()) ?? osActor(sources.env);
}

function checked(actor: string, fromEnv: boolean): string {
  if (actor.length > 0 && actor.length <= MAX_ACTOR_LENGTH && ACTOR.test(actor)) return actor;
  throw new UsageError(
    `${fromEnv ? 'ISR_ACTOR' : '--by'} must be 1 to ${MAX_ACTOR_LENGTH} printable characters`,
  );
}

/** The OS user, as earlier versions recorded it (`alice@isr-cli`). */
const osActor = (env: Record<string, string | undefined>): string =>
  `${env.USER ?? env.USERNAME ?? userInfo().username}@isr-cli`;

/**
 * The caller of a deployed stack's commands: STS GetCallerIdentity, which needs no permission
 * (https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html). A failure
 * is noted and the OS user recorded instead: an operator's hold must not wait on STS.
 */
export async function awsCaller(
  target: Pick<Target, 'kind' | 'region'>,
  note: (line: string) => void,
  client?: STSClient,
): Promise<string | undefined> {
  if (target.kind === 'local') return undefined;
  const sts = client ?? new STSClient({ region: target.region });
  try {
    const { Arn } = await sts.send(new GetCallerIdentityCommand({}));
    return Arn;
  } catch (error) {
    note(`could not read the AWS caller (${(error as Error).message}): recording the OS user`);
    return undefined;
  } finally {
    sts.destroy();
  }
}
