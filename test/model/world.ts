/**
 * The system under test for the model check: real worker and origin code, on DynamoDB Local and
 * s3rver, each actor with its own SDK clients whose middleware (a) parks every call at the
 * interleaver's gate, (b) injects the actor's faults, (c) records what committed in a global,
 * totally ordered event log that the invariants are checked against.
 */
import { randomUUID } from 'node:crypto';
import {
  DynamoDBClient,
  TransactionCanceledException,
  type PutItemCommandInput,
  type UpdateItemCommandInput,
  type TransactWriteItemsCommandInput,
} from '@aws-sdk/client-dynamodb';
import { S3Client, type PutObjectCommandInput } from '@aws-sdk/client-s3';
import { htmlPage, ModuleRenderer } from '../../lambda/adapters/renderer/module.js';
import type { Clock } from '../../lambda/core/clock.js';
import type { BodyStore } from '../../lambda/core/page/ports.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import { TransactionConflicts } from '../helpers/dynamodb-conflicts.js';
import { seededRandom } from '../helpers/random.js';
import type { Interleaver } from './interleaver.js';
import { pkOfBody, stampOf } from './tenants.js';

/** Where a crash can strike: right after this call has taken effect. */
export const CrashPoint = {
  RequestWritten: 'req-written',
  LeaseTaken: 'lease-taken',
  BodyWritten: 'body-written',
  PublishSent: 'publish-sent',
} as const;
export type CrashPoint = (typeof CrashPoint)[keyof typeof CrashPoint];

export interface ActorFaults {
  /** Seconds this actor's clock is ahead (or behind) of true time. */
  readonly skew: number;
  readonly crashAfter?: CrashPoint | undefined;
  /** Its first publish is cancelled with TransactionConflict before reaching DynamoDB. */
  readonly conflictOnPublish?: boolean;
  /** Its first publish commits, but the answer is lost (a network error comes back instead). */
  readonly loseAnswer?: boolean;
  /** It dies right after its n-th write that took effect (a fan-out step's crash point). */
  readonly crashAfterWrites?: number | undefined;
}

/** Calls that write: a `run` step counts these, and so does `crashAfterWrites`. */
export const WRITES = new Set([
  'dynamodb:PutItemCommand',
  'dynamodb:UpdateItemCommand',
  'dynamodb:DeleteItemCommand',
  'dynamodb:TransactWriteItemsCommand',
  'dynamodb:BatchWriteItemCommand',
  's3:PutObjectCommand',
  's3:DeleteObjectCommand',
  'cloudfront:CreateInvalidationCommand',
  'sqs:SendMessageCommand',
  'sqs:SendMessageBatchCommand',
]);

export type ModelEvent =
  | {
      kind: 'acquire';
      actor: string;
      pk: string;
      token: string;
      expiresAt: number;
      at: number;
      skew: number;
    }
  /** An operator took the lease, live or not (rollback, hold). */
  | { kind: 'seize'; actor: string; pk: string; token: string; expiresAt: number; at: number }
  | { kind: 'release'; actor: string; pk: string; token: string }
  | {
      kind: 'publish';
      actor: string;
      pk: string;
      token: string;
      s3Key: string;
      generatedAt: number;
      intent: string | undefined;
      /** True time when it committed. */
      at: number;
    }
  /** An operator's write of META under its seized lease (rollback, hold). */
  | {
      kind: 'restore';
      actor: string;
      pk: string;
      token: string;
      s3Key: string;
      generatedAt: number;
      holdUntil: number | undefined;
      at: number;
    }
  /** A body written, at true time `at`. */
  | { kind: 'body'; actor: string; pk: string; s3Key: string; content: string; at: number }
  /** A body deleted (a sweeper's retire, a worker's prune or abandoned render). */
  | { kind: 'retire'; actor: string; pk: string; s3Key: string; at: number }
  /** A CreateInvalidation the fake CloudFront got, and what it did with it. */
  | { kind: 'cdn'; actor: string; purgeId: string; items: string[]; outcome: string }
  /**
   * A viewer's answer: the body it got, how (HIT, STALE, MISS), where in the log its request
   * began, and its clock then (seconds).
   */
  | {
      kind: 'served';
      actor: string;
      pk: string;
      from: number;
      now: number;
      content: string | undefined;
      cache: string | undefined;
    }
  /** A message sent to the model's queue (a fan-out step or an intent), or collapsed by SQS. */
  | { kind: 'sent'; actor: string; body: string; collapsed: boolean }
  /** The actor died as planned, right after this write (`crashAfterWrites`). */
  | { kind: 'crash'; actor: string; after: string }
  /** A key marked as pass (hit-for-pass, `META#PASS`): its render was not to be stored. */
  | { kind: 'pass'; actor: string; pk: string }
  /** A viewer's request passed to the upstream, and the tenant the pass named (multi-tenant). */
  | { kind: 'passed'; actor: string; path: string; tenant: string }
  /** A fan-out step's delivery ended: what the worker reported (or `dropped`, never delivered). */
  | { kind: 'step'; actor: string; body: string; outcome: string }
  /** An operator's hold: `hold_until` alone, under its seized lease. */
  | { kind: 'hold'; actor: string; pk: string; token: string; holdUntil: number; at: number }
  /** A hold lifted (`release`). */
  | { kind: 'unhold'; actor: string; pk: string }
  /** META deleted (a revalidation in `expire` mode). */
  | { kind: 'expire'; actor: string; pk: string }
  /**
   * A revalidation answered (its 202): `from` is the log's length when it began; `pks` the pages
   * it covers, `held` those it found held.
   */
  | {
      kind: 'revalidated';
      actor: string;
      from: number;
      pks: string[];
      tags: string[];
      mode: 'stale' | 'expire';
      /** Multi-tenant runs: the tenant it was for (only its pages are covered). */
      tenant?: string;
      /** The CDN purge it asked for (CloudFront's CallerReference). */
      purgeId: string | undefined;
    }
  | {
      kind: 'render';
      actor: string;
      intent: string;
      pk: string;
      content: string;
      tags: string[];
      at: number;
    };

/** Shared state of one run: true time (epoch seconds) and the event log. */
/** A wall-clock sleep whose timer never holds the process open. */
const unrefSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    if (signal?.aborted === true) return resolve();
    const wake = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    timer.unref();
    signal?.addEventListener('abort', wake, { once: true });
  });

export class World {
  trueTime: number;
  readonly log: ModelEvent[] = [];
  /** Renders so far in the run, by every actor (their tags alternate with it). */
  renders = 0;
  /** Scopes the run's tags: runs share one table, and a tag's fan-out must stay in its run. */
  tagPrefix = '';
  /**
   * DynamoDB's transaction conflict rule (`dynamodb-conflicts.ts`), which DynamoDB Local does
   * not show: a request meeting an item an ongoing transaction includes is refused as DynamoDB
   * refuses it. With `holdTransactions` (the plan's `conflicts`), every transaction an actor
   * sends stays ongoing until the schedule lets it through (`<command>:ongoing`), so the others'
   * requests meet it.
   */
  readonly conflicts = new TransactionConflicts();
  holdTransactions = false;
  /** The run's first renders that answer `private` (a page not to be stored: hit-for-pass). */
  passRenders = 0;
  /** The ongoing ends of the transactions held at their gate now. */
  readonly #held: (() => void)[] = [];
  /** Where in the log each actor's first call went through: when its request began. */
  readonly firstCall = new Map<string, number>();
  readonly #writes = new Map<string, number>();
  readonly #endpoints: { dynamodb: string; s3: string };

  /** The actors' random choices (render-slot probes), seeded alike in every run: replayable. */
  readonly random: () => number;

  constructor(endpoints: { dynamodb: string; s3: string }, startTime: number) {
    this.#endpoints = endpoints;
    this.trueTime = startTime;
    this.random = seededRandom(0x15a);
  }

  /**
   * An actor's clock: the schedule's time, skewed. Its sleeps (a lease keeper set to an hour, a
   * publish retry) run on the wall clock, as they always have here: the interleaver waits for an
   * actor asleep on a timer, and time itself only moves when the schedule says so. Their timers
   * do not keep the process alive: an actor the schedule crashed never wakes to stop its keeper.
   */
  clockFor(skew: number): Clock {
    return { now: () => (this.trueTime + skew) * 1000, sleep: unrefSleep };
  }

  /**
   * A clock whose sleep is model time: the sleeper parks at a gate (`clock:sleep`), and when the
   * schedule releases it, time has passed its wake-up (jumped there if nothing else moved it).
   * For the revalidate function's wait before its 202, which the guarantee rests on.
   */
  sleepingClockFor(actor: string, skew: number, interleaver: Interleaver): Clock {
    return {
      now: () => (this.trueTime + skew) * 1000,
      sleep: async (ms) => {
        const wakeAt = this.trueTime + Math.ceil(ms / 1000);
        await interleaver.gate(actor, 'clock:sleep');
        this.trueTime = Math.max(this.trueTime, wakeAt);
      },
    };
  }

  /**
   * Counts a call of `actor` that took effect; @returns whether it was the write after which
   * the actor's plan crashes it (`crashAfterWrites`).
   */
  wrote(actor: string, faults: ActorFaults, command: string): boolean {
    if (!WRITES.has(command)) return false;
    const writes = (this.#writes.get(actor) ?? 0) + 1;
    this.#writes.set(actor, writes);
    if (writes !== faults.crashAfterWrites) return false;
    this.log.push({ kind: 'crash', actor, after: command });
    return true;
  }

  /** SDK clients for one actor: gated, faulty as planned, recording what commits. */
  clientsFor(actor: string, interleaver: Interleaver, faults: ActorFaults): AwsClients {
    const common = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 };
    const dynamodb = new DynamoDBClient({ ...common, endpoint: this.#endpoints.dynamodb });
    const s3 = new S3Client({
      ...common,
      endpoint: this.#endpoints.s3,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    let publishes = 0;
    const middleware =
      (service: 'dynamodb' | 's3') =>
      (next: (args: { input: object }) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: object }): Promise<unknown> => {
        const command = `${service}:${context.commandName ?? '?'}`;
        await interleaver.gate(actor, command);
        if (!this.firstCall.has(actor)) this.firstCall.set(actor, this.log.length);
        // A snapshot: a guard-removing middleware further in may rewrite the request in place.
        const input = structuredClone(args.input);
        if (command === 'dynamodb:TransactWriteItemsCommand') {
          publishes += 1;
          if (faults.conflictOnPublish === true && publishes === 1) {
            throw new TransactionCanceledException({
              message: 'Transaction cancelled (injected)',
              $metadata: {},
              CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
            });
          }
        }
        const result = await this.#underConflictRule(actor, interleaver, command, args, next);
        const crashPoint = this.#record(actor, faults, command, input);
        if (crashPoint !== undefined && crashPoint === faults.crashAfter)
          await interleaver.die(actor);
        if (this.wrote(actor, faults, command)) await interleaver.die(actor);
        if (
          command === 'dynamodb:TransactWriteItemsCommand' &&
          faults.loseAnswer === true &&
          publishes === 1
        ) {
          throw Object.assign(new Error('socket hang up (injected: answer lost)'), {
            name: 'TimeoutError',
          });
        }
        return result;
      };
    dynamodb.middlewareStack.add(middleware('dynamodb') as never, {
      step: 'initialize',
      name: 'model-gate',
    });
    s3.middlewareStack.add(middleware('s3') as never, { step: 'initialize', name: 'model-gate' });
    return { dynamodb, s3, sqs: undefined as never };
  }

  /** A renderer that logs each render and produces a page unique to this actor and call. */
  rendererFor(actor: string, intent: string): Renderer {
    let calls = 0;
    return new ModuleRenderer((request) => {
      calls += 1;
      this.renders += 1;
      const content = `page ${request.cacheKey.key} by ${actor} #${calls}${stampOf(request.cacheKey.tenant)}`;
      // Tags change between generations: `all` always, then `p0` or `p1` by turns.
      const tags = [`${this.tagPrefix}all`, `${this.tagPrefix}p${this.renders % 2}`];
      this.log.push({
        kind: 'render',
        actor,
        intent,
        pk: request.cacheKey.pk,
        content,
        tags,
        at: this.trueTime,
      });
      const page = htmlPage(content, { revalidateSeconds: REVALIDATE_SECONDS });
      // The upstream's first renders answer `private` (not to be stored), then it is fixed.
      if (this.renders <= this.passRenders) {
        return { ...page, headers: { 'cache-control': 'private' }, tags };
      }
      return { ...page, tags };
    });
  }

  /**
   * Sends a DynamoDB request under the conflict rule: refused if it meets an ongoing
   * transaction; a transaction held ongoing at its own gate first, when the plan says so.
   */
  async #underConflictRule(
    actor: string,
    interleaver: Interleaver,
    command: string,
    args: { input: object },
    next: (args: { input: object }) => Promise<unknown>,
  ): Promise<unknown> {
    if (!command.startsWith('dynamodb:')) return interleaver.inFlight(() => next(args));
    const name = command.slice('dynamodb:'.length);
    let end: () => void;
    try {
      end = this.conflicts.begin(name, args.input);
    } catch (refused) {
      // A held transaction cancels one request, then lets others by (it waits at its gate, and
      // commits when the schedule says: as if it were sent then). A transaction is ongoing for
      // milliseconds, while a request SQS delivers again comes a visibility timeout later.
      for (const held of this.#held.splice(0)) held();
      throw refused;
    }
    try {
      if (this.holdTransactions && name === 'TransactWriteItemsCommand') {
        this.#held.push(end);
        await interleaver.gate(actor, `${command}:ongoing`);
      }
      return await interleaver.inFlight(() => next(args));
    } finally {
      end();
    }
  }

  /** Records a call that took effect; returns the crash point it reached, if any. */
  #record(
    actor: string,
    faults: ActorFaults,
    command: string,
    input: object,
  ): CrashPoint | undefined {
    switch (command) {
      case 'dynamodb:PutItemCommand': {
        const put = input as PutItemCommandInput;
        const item = put.Item ?? {};
        if (item.sk?.S === 'LOCK' && put.ConditionExpression === undefined) {
          this.log.push({
            kind: 'seize',
            actor,
            pk: item.pk?.S ?? '',
            token: item.lease_token?.S ?? '',
            expiresAt: Number(item.lease_expires_at?.N),
            at: this.trueTime,
          });
          return undefined;
        }
        if (item.sk?.S === 'LOCK') {
          this.log.push({
            kind: 'acquire',
            actor,
            pk: item.pk?.S ?? '',
            token: item.lease_token?.S ?? '',
            expiresAt: Number(item.lease_expires_at?.N),
            at: this.trueTime,
            skew: faults.skew,
          });
          return CrashPoint.LeaseTaken;
        }
        return item.sk?.S?.startsWith('REQ#') === true ? CrashPoint.RequestWritten : undefined;
      }
      case 'dynamodb:DeleteItemCommand': {
        const del = input as {
          Key?: Record<string, { S?: string }>;
          ExpressionAttributeValues?: Record<string, { S?: string }>;
        };
        if (del.Key?.sk?.S === 'META') {
          this.log.push({ kind: 'expire', actor, pk: del.Key.pk?.S ?? '' });
        }
        if (del.Key?.sk?.S === 'LOCK') {
          this.log.push({
            kind: 'release',
            actor,
            pk: del.Key.pk?.S ?? '',
            token: del.ExpressionAttributeValues?.[':token']?.S ?? '',
          });
        }
        return undefined;
      }
      case 'dynamodb:UpdateItemCommand': {
        const update = input as UpdateItemCommandInput;
        // A release: the hold removed (and who released it set).
        const lifts = update.UpdateExpression?.startsWith('REMOVE #hold_until') === true;
        if (update.Key?.sk?.S === 'META' && lifts) {
          this.log.push({ kind: 'unhold', actor, pk: update.Key.pk?.S ?? '' });
        }
        return undefined;
      }
      case 'dynamodb:TransactWriteItemsCommand': {
        const items = (input as TransactWriteItemsCommandInput).TransactItems ?? [];
        const held = items[0]?.Update;
        if (
          held?.Key?.sk?.S === 'META' &&
          held.UpdateExpression?.includes('#hold_until') === true
        ) {
          this.log.push({
            kind: 'hold',
            actor,
            pk: held.Key.pk?.S ?? '',
            token: items[1]?.Delete?.ExpressionAttributeValues?.[':token']?.S ?? '',
            holdUntil: Number(held.ExpressionAttributeValues?.[':hold_until']?.N),
            at: this.trueTime,
          });
          return undefined;
        }
        const put = items[0]?.Put;
        if (put?.Item?.sk?.S === 'META#PASS') {
          // The mark ends the caller's lease and deletes META, in the same transaction.
          const pk = put.Item.pk?.S ?? '';
          const token = items[1]?.Delete?.ExpressionAttributeValues?.[':token']?.S ?? '';
          this.log.push({ kind: 'pass', actor, pk });
          this.log.push({ kind: 'release', actor, pk, token });
          this.log.push({ kind: 'expire', actor, pk });
          return undefined;
        }
        // Only a publish or a restore puts META first (tag index removals, forgets do not).
        if (put?.Item?.sk?.S !== 'META') return undefined;
        const meta = put?.Item ?? {};
        const common = {
          actor,
          pk: meta.pk?.S ?? '',
          token: items[1]?.Delete?.ExpressionAttributeValues?.[':token']?.S ?? '',
          s3Key: meta.s3_key?.S ?? '',
          generatedAt: Number(meta.generated_at?.N),
          at: this.trueTime,
        };
        // An operator's restore is conditioned on the generation it read, a publish never is.
        if (put?.ConditionExpression?.includes('#generated_at = :generated_at') === true) {
          const hold = meta.hold_until?.N;
          this.log.push({
            kind: 'restore',
            ...common,
            holdUntil: hold === undefined ? undefined : Number(hold),
          });
          return undefined;
        }
        const seal = items.find((item) => item.Update?.Key?.sk?.S?.startsWith('REQ#') === true);
        this.log.push({
          kind: 'publish',
          ...common,
          intent: seal?.Update?.Key?.sk?.S?.slice('REQ#'.length),
        });
        return CrashPoint.PublishSent;
      }
      case 's3:PutObjectCommand': {
        const put = input as PutObjectCommandInput;
        const key = put.Key ?? '';
        this.log.push({
          kind: 'body',
          actor,
          pk: pkOfBody(key),
          s3Key: key,
          content: new TextDecoder().decode(put.Body as Uint8Array),
          at: this.trueTime,
        });
        return CrashPoint.BodyWritten;
      }
      case 's3:DeleteObjectCommand': {
        const key = (input as { Key?: string }).Key ?? '';
        const pk = pkOfBody(key);
        this.log.push({ kind: 'retire', actor, pk, s3Key: key, at: this.trueTime });
        return undefined;
      }
      default:
        return undefined;
    }
  }
}

export const LEASE_SECONDS = 30;
export const REVALIDATE_SECONDS = 20;

/**
 * Negative control for rule 3 (immutable bodies): every render of a page writes one shared key,
 * as a naive implementation would.
 */
export function sharedKeyBodies(bodies: BodyStore): BodyStore {
  return {
    putBody: (input) =>
      bodies.putBody({ ...input, s3Key: input.s3Key.replace(/\/[^/]+$/, '/shared') }),
    getBody: (s3Key) => bodies.getBody(s3Key),
    deleteBody: (s3Key) => bodies.deleteBody(s3Key),
  };
}

export const uniqueRunId = (): string => randomUUID().slice(0, 8);
