/**
 * The regeneration baseline: the calls one worker regeneration makes, in its order and with its
 * conditions and row shapes, issued as bare SDK calls around a bare render. What the worker takes
 * beyond this is the service's own overhead (idempotency library, hashing, logging, settling).
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import {
  keyOf,
  leaseToItem,
  metaToItem,
  versionToItem,
} from '../lambda/adapters/shared/dynamodb/items.js';
import { namesOf } from '../lambda/adapters/shared/dynamodb/conditions.js';
import { claimItem, sealUpdate } from '../lambda/adapters/shared/dynamodb/request-row.js';
import type { CacheKey } from '../lambda/core/page/model.js';
import { bodyKeyOf, versionSortKey } from '../lambda/core/page/rows.js';
import type { AwsClients } from '../lambda/shared/aws-clients.js';
import type { Scenario } from './fixture.js';

/** Conditions copied from the worker's writes (`lambda/adapters/shared/dynamodb/conditions.ts`). */
const CLAIM =
  'attribute_not_exists(#pk) OR #ttl < :now OR (#status = :started AND #in_progress_expires_at_ms < :now_ms)';
const LEASE_FREE = '(attribute_not_exists(#pk) OR #lease_expires_at <= :now)';
// Never backwards, and no revalidation mark since the render read META (absent here).
const NOT_BACKWARDS =
  '(attribute_not_exists(#pk) OR #generated_at <= :generated_at) AND ' +
  '(attribute_not_exists(#pk) OR attribute_not_exists(#revalidated_by))';
const LEASE_OWNED =
  '(#lease_token = :token) AND (#lease_expires_at > :now) AND (attribute_not_exists(#revalidated_by))';
const STARTED = '(#status = :started)';
const NEW_VERSION = '(attribute_not_exists(#pk))';

/**
 * One regeneration's calls with `clients`: META read, REQ# claim, lease, META re-read, render,
 * body put, the publish transaction (META, LOCK delete, REQ# seal, VER#).
 */
export async function sameCalls(s: Scenario, clients: AwsClients, key: CacheKey): Promise<void> {
  const db = clients.dynamodb;
  const table = s.tableName;
  const now = s.clock.seconds;
  const metaKey = { TableName: table, Key: keyOf(key.pk, 'META'), ConsistentRead: true };
  await db.send(new GetItemCommand(metaKey));
  const messageId = randomUUID();
  const request = JSON.stringify({ cacheKey: key.key, deployId: 'bench', tenant: null });
  const claim = claimItem({
    pk: key.pk,
    key: messageId,
    claimToken: randomUUID(),
    requestHash: createHash('sha256').update(request).digest('base64'),
    ttl: now + 86_400,
    inProgressExpiresAtMs: now * 1000 + 60_000,
    createdAt: now,
    lockedBy: 'bench',
    request,
  });
  await db.send(
    new PutItemCommand({
      TableName: table,
      Item: claim,
      ConditionExpression: CLAIM,
      ExpressionAttributeNames: namesOf(CLAIM),
      ExpressionAttributeValues: {
        ':now': { N: String(now) },
        ':now_ms': { N: String(now * 1000) },
        ':started': { S: 'STARTED' },
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
  const lease = { pk: key.pk, token: randomUUID(), expiresAt: now + 30 };
  await db.send(
    new PutItemCommand({
      TableName: table,
      Item: leaseToItem(lease, lease.expiresAt + 604_800),
      ConditionExpression: LEASE_FREE,
      ExpressionAttributeNames: namesOf(LEASE_FREE),
      ExpressionAttributeValues: { ':now': { N: String(now) } },
      ReturnValues: 'ALL_OLD',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
  await db.send(new GetItemCommand(metaKey));
  const page = await s.renderer.render({ cacheKey: key, signal: new AbortController().signal });
  const s3Key = bodyKeyOf(key, lease.token);
  const { ETag } = await clients.s3.send(
    new PutObjectCommand({
      Bucket: s.bucket,
      Key: s3Key,
      Body: page.body,
      ContentType: page.contentType,
      Metadata: { 'facetheory-status': String(page.status) },
      IfNoneMatch: '*',
    }),
  );
  const currentSk = versionSortKey(now, lease.token);
  const meta = {
    pk: key.pk,
    s3Key,
    etag: ETag,
    generatedAt: now,
    revalidateSeconds: 60,
    contentType: page.contentType,
    statusCode: page.status,
    ttl: now + 604_860,
    currentSk,
    versionSks: [currentSk],
  };
  await db.send(
    new TransactWriteItemsCommand({
      TransactItems: publishItems(table, meta, lease.token, messageId, now),
    }),
  );
}

function publishItems(
  table: string,
  meta: Parameters<typeof versionToItem>[0],
  token: string,
  messageId: string,
  now: number,
) {
  const seal = sealUpdate({ s3Key: meta.s3Key, generatedAt: now, ttl: now + 86_400, now });
  return [
    {
      Put: {
        TableName: table,
        Item: metaToItem(meta),
        ConditionExpression: NOT_BACKWARDS,
        ExpressionAttributeNames: namesOf(NOT_BACKWARDS),
        ExpressionAttributeValues: { ':generated_at': { N: String(now) } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    },
    {
      Delete: {
        TableName: table,
        Key: keyOf(meta.pk, 'LOCK'),
        ConditionExpression: LEASE_OWNED,
        ExpressionAttributeNames: namesOf(LEASE_OWNED),
        ExpressionAttributeValues: { ':token': { S: token }, ':now': { N: String(now) } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    },
    {
      Update: {
        TableName: table,
        Key: keyOf(meta.pk, `REQ#${messageId}`),
        ...seal,
        ConditionExpression: STARTED,
        ExpressionAttributeNames: namesOf(seal.UpdateExpression, STARTED),
        ExpressionAttributeValues: {
          ...seal.ExpressionAttributeValues,
          ':started': { S: 'STARTED' },
        },
      },
    },
    {
      Put: {
        TableName: table,
        Item: versionToItem(meta),
        ConditionExpression: NEW_VERSION,
        ExpressionAttributeNames: namesOf(NEW_VERSION),
      },
    },
  ];
}
