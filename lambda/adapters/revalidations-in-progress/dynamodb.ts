/**
 * The in-progress rows on the cache table: `pk = REVALIDATING#<tenant or _>#<shard>`,
 * `sk = STATE`, one attribute per `<mode>#<tag>` holding `{ at_ms, effect_id }` (an attribute of
 * its own, so one entry is set or removed under its own condition, with no map to create
 * first). An entry is written to every shard with its fan-out's start (`fan-out-starts/`), and
 * removed from every shard in one transaction, so the shards never disagree on who owns it.
 * The origin reads a shard with one strongly consistent GetItem.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { TransactionConflictError } from '../../core/errors.js';
import type { InProgressEntry, RevalidationsInProgress } from '../../core/page/ports.js';
import { transactOrCancelled } from '../shared/dynamodb/cancellation.js';
import { keyOf } from '../shared/dynamodb/items.js';
import { IN_PROGRESS_SK, inProgressPartition } from './keys.js';
import { DynamoTableAdapter } from '../shared/dynamodb/table.js';

/** Attributes of the row that are entries: every one but the key. */
const KEY_ATTRIBUTES = new Set(['pk', 'sk']);

/** Only the effect that owns an entry removes it: a later revalidation's entry stays. */
const STILL_OURS = '#entry.effect_id = :effect';

export class DynamoRevalidationsInProgress
  extends DynamoTableAdapter
  implements RevalidationsInProgress
{
  async end(
    tenant: string | undefined,
    shards: number,
    key: string,
    effectId: string,
  ): Promise<boolean> {
    const remove = (shard: number) => ({
      Update: {
        TableName: this.table,
        Key: keyOf(inProgressPartition(tenant, shard), IN_PROGRESS_SK),
        UpdateExpression: 'REMOVE #entry',
        ConditionExpression: STILL_OURS,
        ExpressionAttributeNames: { '#entry': key },
        ExpressionAttributeValues: { ':effect': { S: effectId } },
      },
    });
    const refused = await transactOrCancelled(
      this.db,
      Array.from({ length: shards }, (_, s) => remove(s)),
    );
    if (refused === undefined) return true;
    if (!refused.conflict) return false;
    throw new TransactionConflictError(`removing ${key} of ${effectId} conflicted`, {
      cause: refused.error,
    });
  }

  async read(tenant: string | undefined, shard: number): Promise<Map<string, InProgressEntry>> {
    const { Item } = await this.db.send(
      new GetItemCommand({
        TableName: this.table,
        Key: keyOf(inProgressPartition(tenant, shard), IN_PROGRESS_SK),
        ConsistentRead: true,
      }),
    );
    const entries = new Map<string, InProgressEntry>();
    for (const [name, value] of Object.entries(Item ?? {})) {
      if (KEY_ATTRIBUTES.has(name) || value.M === undefined) continue;
      const atMs = Number(value.M.at_ms?.N);
      const effectId = value.M.effect_id?.S;
      if (Number.isFinite(atMs) && effectId !== undefined) entries.set(name, { atMs, effectId });
    }
    return entries;
  }
}
