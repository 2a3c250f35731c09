/**
 * An unchanged render's refresh on DynamoDB: one UpdateItem of META (1 WCU while META is under
 * 1 KB), conditioned on META being what the render read under its lease. Why no transaction is
 * needed: `refreshUnchanged` (core/regenerate/unchanged.ts). Used by `DynamoCacheTable`.
 */
import {
  ConditionalCheckFailedException,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import {
  LeaseLostError,
  NewerGenerationError,
  RevalidatedDuringRenderError,
  type IsrError,
} from '../../../core/errors.js';
import type { RefreshInput } from '../../../core/page/ports.js';
import type { CacheMeta } from '../../../core/page/model.js';
import { SortKey } from '../../../core/page/rows.js';
import { Guard, allOf, namesOf } from './conditions.js';
import { keyOf, num, str, type Item } from './items.js';

/** What a refresh clears, as a publish's new META would not carry it. */
const CLEARED = [
  'revalidated_by',
  'revalidated_at',
  'regen_failures',
  'regen_failed_at',
  'regen_next_at',
  'regen_error',
  'status_shard',
  'status_at',
];

const UPDATE =
  'SET #generated_at = :new_generated_at, #revalidate_seconds = :revalidate_seconds, ' +
  '#ttl = :ttl, #modified_at = :modified_at, #unchanged_renders = :unchanged_renders ' +
  `REMOVE ${CLEARED.map((name) => `#${name}`).join(', ')}`;

/** META is still the generation, mark and hold the render read (`Guard.sameMark`...). */
function unchangedSince(observed: CacheMeta): {
  readonly condition: string;
  readonly values: Record<string, AttributeValue>;
} {
  type Part = { readonly condition: string; readonly values: Record<string, AttributeValue> };
  const mark: Part =
    observed.revalidatedBy === undefined
      ? { condition: Guard.stillUnmarked, values: {} }
      : { condition: Guard.sameMark, values: { ':seen_mark': { S: observed.revalidatedBy } } };
  const hold: Part =
    observed.holdUntil === undefined
      ? { condition: Guard.notHeld, values: {} }
      : { condition: Guard.sameHold, values: { ':seen_hold': { N: String(observed.holdUntil) } } };
  return {
    condition: allOf(Guard.sameBody, Guard.sameGeneration, mark.condition, hold.condition),
    values: {
      ':s3_key': { S: observed.s3Key },
      ':generated_at': { N: String(observed.generatedAt) },
      ...mark.values,
      ...hold.values,
    },
  };
}

export async function refreshGeneration(
  client: DynamoDBClient,
  tableName: string,
  input: RefreshInput,
): Promise<void> {
  const { observed, meta } = input;
  const guard = unchangedSince(observed);
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: keyOf(observed.pk, SortKey.Meta),
        UpdateExpression: UPDATE,
        ConditionExpression: guard.condition,
        ExpressionAttributeNames: namesOf(UPDATE, guard.condition),
        ExpressionAttributeValues: {
          ':new_generated_at': { N: String(meta.generatedAt) },
          ':revalidate_seconds': { N: String(meta.revalidateSeconds) },
          ':ttl': { N: String(meta.ttl ?? 0) },
          ':modified_at': { N: String(meta.modifiedAt ?? observed.generatedAt) },
          ':unchanged_renders': { N: String(meta.unchangedRenders ?? 1) },
          ...guard.values,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    throw refusalOf(observed, error.Item, error);
  }
}

/**
 * Which writer came in between, from META as it is: none left (an expire), another generation
 * (a publish, a rollback), a revalidation's mark, or an operator's hold.
 */
function refusalOf(observed: CacheMeta, live: Item | undefined, cause: unknown): IsrError {
  const pk = observed.pk;
  if (live === undefined) return new RevalidatedDuringRenderError(pk, { cause });
  const generatedAt = num(live, 'generated_at');
  if (str(live, 's3_key') !== observed.s3Key || generatedAt !== observed.generatedAt) {
    return new NewerGenerationError(pk, generatedAt, { cause });
  }
  if (str(live, 'revalidated_by') !== observed.revalidatedBy) {
    return new RevalidatedDuringRenderError(pk, { cause });
  }
  return new LeaseLostError(pk, undefined, { cause });
}
