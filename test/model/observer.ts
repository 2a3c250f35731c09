/**
 * The model check's own view of the table and the bucket (never gated, never faulty), and the
 * invariants read from it: every live or kept version points to the body its publisher wrote,
 * and no REQ# row is left STARTED that a later delivery could not finish.
 */
import { DynamoDBClient, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { DynamoRevalidationsInProgress } from '../../lambda/adapters/revalidations-in-progress/dynamodb.js';
import { DynamoRevalidationStatuses } from '../../lambda/adapters/revalidation-statuses/dynamodb.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import type { MessageReport } from '../../lambda/core/worker/deps.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import { InvariantViolation, type ModelContext } from './context.js';
import type { ModelEvent } from './world.js';

export function observerFor(context: ModelContext) {
  const common = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamodb = new DynamoDBClient({ ...common, endpoint: context.endpoints.dynamodb });
  const s3 = new S3Client({
    ...common,
    endpoint: context.endpoints.s3,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const tableName = context.workerConfig.tableName;
  return {
    dynamodb,
    tableName,
    table: new DynamoCacheTable({ client: dynamodb, tableName: context.workerConfig.tableName }),
    history: new DynamoPageHistory({
      client: dynamodb,
      tableName: context.workerConfig.tableName,
    }),
    bodies: new S3BodyStore({ client: s3, bucket: context.workerConfig.bucket }),
    inProgress: new DynamoRevalidationsInProgress({ client: dynamodb, tableName }),
    statuses: new DynamoRevalidationStatuses({ client: dynamodb, tableName }),
    /** Bodies read so far, by key (`bodyOf`): a body changes only by a logged write or delete. */
    bodiesRead: new Map<string, string | undefined>(),
    /** How much of the run's log `bodiesRead` has been brought up to date with. */
    logSeen: 0,
    destroy: () => {
      dynamodb.destroy();
      s3.destroy();
    },
  };
}
export type Observer = ReturnType<typeof observerFor>;

/** Each key's META as it is now (strongly consistent). */
export async function metasOf(observer: Observer, keys: readonly CacheKey[]) {
  const metas = await Promise.all(
    keys.map(
      async (key) => [key.pk, await observer.table.getMeta(key.pk, { consistent: true })] as const,
    ),
  );
  return new Map(metas);
}

/**
 * META only ever points to a complete body written by the worker whose publish won, and so does
 * every version META keeps: its VER# row exists and its body is what its publisher wrote. The
 * live version is one of the kept ones and names META's body. Checked after every step that
 * wrote a body, published or restored, so a transient overwrite is caught too, and once more
 * after the run.
 */
export async function checkLiveBody(
  log: readonly ModelEvent[],
  fresh: readonly ModelEvent[],
  observer: Observer,
): Promise<void> {
  const touched = new Set(
    fresh
      .filter(
        (event) =>
          event.kind === 'body' ||
          event.kind === 'publish' ||
          event.kind === 'restore' ||
          event.kind === 'retire',
      )
      .map((event) => event.pk),
  );
  for (const pk of touched) {
    const meta = await observer.table.getMeta(pk, { consistent: true });
    if (meta === undefined) continue;
    await checkBodyOf(log, observer, `META of ${pk}`, meta.s3Key);
    if (meta.currentSk === undefined) continue;
    if (!(meta.versionSks ?? []).includes(meta.currentSk)) {
      throw new InvariantViolation(
        `META of ${pk} points at ${meta.currentSk}, which it does not keep`,
      );
    }
    for (const sk of meta.versionSks ?? []) {
      const version = await observer.history.version(pk, sk);
      if (version === undefined)
        throw new InvariantViolation(`META of ${pk} keeps ${sk}, whose row is gone`);
      if (sk === meta.currentSk && version.s3Key !== meta.s3Key) {
        throw new InvariantViolation(
          `META of ${pk} serves ${meta.s3Key} but its live version ${sk} is ${version.s3Key}`,
        );
      }
      await checkBodyOf(log, observer, `version ${sk} of ${pk}`, version.s3Key);
    }
  }
}

/** `s3Key` was written by the actor whose publish put it in META, and still holds that body. */
async function checkBodyOf(
  log: readonly ModelEvent[],
  observer: Observer,
  what: string,
  s3Key: string,
): Promise<void> {
  const winner = [...log]
    .reverse()
    .find((event) => event.kind === 'publish' && event.s3Key === s3Key);
  if (winner === undefined)
    throw new InvariantViolation(`${what} points at ${s3Key}, which no publish wrote`);
  const written = [...log]
    .reverse()
    .find(
      (event): event is Extract<ModelEvent, { kind: 'body' }> =>
        event.kind === 'body' && event.s3Key === s3Key && event.actor === winner.actor,
    );
  const text = await bodyOf(log, observer, s3Key);
  if (written === undefined || text !== written.content) {
    throw new InvariantViolation(
      `${what} points at ${s3Key}, published by ${winner.actor}, but the body there is ${JSON.stringify(text)}, not what ${winner.actor} wrote (${JSON.stringify(written?.content)})`,
    );
  }
}

/**
 * No REQ# row stays STARTED without a later delivery able to finish it. A row can be left
 * STARTED legitimately (its delivery crashed, and a duplicate of the same message was answered
 * by a fresh META before reaching REQ#); it must then be past its in-progress expiry, and a new
 * delivery of that message must finish (it may finish without touching the row, which DynamoDB
 * TTL then collects).
 */
export async function checkStartedRequestsCanFinish(
  observer: Observer,
  keys: readonly CacheKey[],
  nowSeconds: number,
  redeliver: (messageId: string) => Promise<MessageReport>,
): Promise<void> {
  for (const key of keys) {
    for (const row of await startedRequests(observer, key)) {
      const messageId = row.sk?.S?.slice('REQ#'.length) ?? '';
      if (Number(row.in_progress_expires_at_ms?.N ?? Infinity) >= nowSeconds * 1000) {
        throw new InvariantViolation(
          `REQ#${messageId} is STARTED and not yet expired after every intent finished`,
        );
      }
      const report = await redeliver(messageId);
      if (report.action === 'retry') {
        throw new InvariantViolation(
          `REQ#${messageId} was left STARTED and a later delivery could not finish: ${JSON.stringify(report)}`,
        );
      }
    }
  }
}

async function startedRequests(observer: Observer, key: CacheKey) {
  const { Items } = await observer.dynamodb.send(
    new QueryCommand({
      TableName: observer.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :req)',
      ExpressionAttributeValues: { ':pk': { S: key.pk }, ':req': { S: 'REQ#' } },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).filter((item) => item.status?.S === 'STARTED');
}

/**
 * The body at `s3Key` (undefined: none). Read once, then again only after the log records a
 * write or a delete of that key (every S3 write of every actor goes through a logged client).
 */
async function bodyOf(
  log: readonly ModelEvent[],
  observer: Observer,
  s3Key: string,
): Promise<string | undefined> {
  for (const event of log.slice(observer.logSeen)) {
    if (event.kind === 'body' || event.kind === 'retire') observer.bodiesRead.delete(event.s3Key);
  }
  observer.logSeen = log.length;
  if (observer.bodiesRead.has(s3Key)) return observer.bodiesRead.get(s3Key);
  const stored = await observer.bodies.getBody(s3Key).catch(() => undefined);
  const text = stored === undefined ? undefined : new TextDecoder().decode(stored.body);
  observer.bodiesRead.set(s3Key, text);
  return text;
}

/** Whether each page has a hit-for-pass mark (`META#PASS`) now, strongly consistent. */
export async function passMarksOf(
  observer: Observer,
  keys: readonly CacheKey[],
): Promise<Map<string, boolean>> {
  const marks = await Promise.all(
    keys.map(async (key) => {
      const { Item } = await observer.dynamodb.send(
        new GetItemCommand({
          TableName: observer.tableName,
          Key: { pk: { S: key.pk }, sk: { S: 'META#PASS' } },
          ConsistentRead: true,
        }),
      );
      return [key.pk, Item !== undefined] as const;
    }),
  );
  return new Map(marks);
}
