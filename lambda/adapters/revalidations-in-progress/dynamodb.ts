/**
 * The in-progress rows on the cache table: `pk = REVALIDATING#<tenant or _>#<shard>`,
 * `sk = STATE`, one attribute per `<mode>#<tag>` holding `{ at_ms, effect_id }` (an attribute of
 * its own, so one entry is set or removed under its own condition in one UpdateItem, with no
 * map to create first). The origin reads a shard with one strongly consistent GetItem.
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { InProgressEntry, RevalidationsInProgress } from '../../core/ports.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { keyOf } from '../shared/dynamodb/items.js';
import { IN_PROGRESS_SK, inProgressPartition } from './keys.js';

/** Attributes of the row that are entries: every one but the key. */
const KEY_ATTRIBUTES = new Set(['pk', 'sk']);

/** The later time wins: an entry is set when absent or older than this one. */
const LATER_WINS = 'attribute_not_exists(#entry) OR #entry.at_ms < :at';
/** Only the effect that set an entry removes it: a later revalidation's entry stays. */
const STILL_OURS = '#entry.effect_id = :effect';

export class DynamoRevalidationsInProgress implements RevalidationsInProgress {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: { client: DynamoDBClient; tableName: string }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async begin(
    tenant: string | undefined,
    shard: number,
    entry: InProgressEntry & { readonly key: string },
  ): Promise<void> {
    await conditionalWrite(
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: keyOf(inProgressPartition(tenant, shard), IN_PROGRESS_SK),
          UpdateExpression: 'SET #entry = :value',
          ConditionExpression: LATER_WINS,
          ExpressionAttributeNames: { '#entry': entry.key },
          ExpressionAttributeValues: {
            ':at': { N: String(entry.atMs) },
            ':value': {
              M: { at_ms: { N: String(entry.atMs) }, effect_id: { S: entry.effectId } },
            },
          },
        }),
      ),
    );
  }

  async end(
    tenant: string | undefined,
    shard: number,
    key: string,
    effectId: string,
  ): Promise<boolean> {
    const removed = await conditionalWrite(
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: keyOf(inProgressPartition(tenant, shard), IN_PROGRESS_SK),
          UpdateExpression: 'REMOVE #entry',
          ConditionExpression: STILL_OURS,
          ExpressionAttributeNames: { '#entry': key },
          ExpressionAttributeValues: { ':effect': { S: effectId } },
        }),
      ),
    );
    return removed !== undefined;
  }

  async read(tenant: string | undefined, shard: number): Promise<Map<string, InProgressEntry>> {
    const { Item } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#tableName,
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
