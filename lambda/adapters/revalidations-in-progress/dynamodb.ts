/**
 * The in-progress rows on the cache table: `pk = REVALIDATING#<tenant or _>#<shard>`,
 * `sk = STATE`, one attribute per `<mode>#<tag>` holding `{ at_ms, effect_id }` (an attribute of
 * its own, so one entry is set or removed under its own condition, with no map to create
 * first). An entry is written to, and removed from, every shard in one transaction, so the
 * shards never disagree on who owns it. The origin reads a shard with one strongly consistent
 * GetItem.
 */
import {
  GetItemCommand,
  TransactWriteItemsCommand,
  type CancellationReason,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { InProgressEntry, RevalidationsInProgress } from '../../core/page/ports.js';
import { TRANSIENT_CODES } from '../shared/dynamodb/cancellation.js';
import { keyOf, type Item } from '../shared/dynamodb/items.js';
import { IN_PROGRESS_SK, inProgressPartition } from './keys.js';

/** Attributes of the row that are entries: every one but the key. */
const KEY_ATTRIBUTES = new Set(['pk', 'sk']);

/** A time never goes back: the entry is set when absent or not later than this one. */
const NOT_LATER = 'attribute_not_exists(#entry) OR #entry.at_ms <= :at';
/** Only the effect that owns an entry removes it: a later revalidation's entry stays. */
const STILL_OURS = '#entry.effect_id = :effect';

/** Attempts of one transaction that lost to a concurrent writer, before it is thrown. */
const ATTEMPTS = 5;

export class DynamoRevalidationsInProgress implements RevalidationsInProgress {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: { client: DynamoDBClient; tableName: string }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  /**
   * On a shard holding a later time (another clock ahead of ours), the transaction is refused
   * and tried again one millisecond past that time: the writer that lands last owns the entry.
   */
  async begin(
    tenant: string | undefined,
    shards: number,
    entry: InProgressEntry & { readonly key: string },
  ): Promise<void> {
    let atMs = entry.atMs;
    for (let attempt = 1; ; attempt += 1) {
      const update = (shard: number) => ({
        Update: {
          TableName: this.#tableName,
          Key: keyOf(inProgressPartition(tenant, shard), IN_PROGRESS_SK),
          UpdateExpression: 'SET #entry = :value',
          ConditionExpression: NOT_LATER,
          ExpressionAttributeNames: { '#entry': entry.key },
          ExpressionAttributeValues: {
            ':at': { N: String(atMs) },
            ':value': { M: { at_ms: { N: String(atMs) }, effect_id: { S: entry.effectId } } },
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
        },
      });
      const refused = await this.#transact(Array.from({ length: shards }, (_, s) => update(s)));
      if (refused === undefined) return;
      if (attempt >= ATTEMPTS) throw refused.error;
      const later = refused.reasons.map((reason) => atMsOf(reason.Item, entry.key));
      atMs = Math.max(atMs, ...later.map((at) => at + 1));
    }
  }

  async end(
    tenant: string | undefined,
    shards: number,
    key: string,
    effectId: string,
  ): Promise<boolean> {
    const remove = (shard: number) => ({
      Update: {
        TableName: this.#tableName,
        Key: keyOf(inProgressPartition(tenant, shard), IN_PROGRESS_SK),
        UpdateExpression: 'REMOVE #entry',
        ConditionExpression: STILL_OURS,
        ExpressionAttributeNames: { '#entry': key },
        ExpressionAttributeValues: { ':effect': { S: effectId } },
      },
    });
    for (let attempt = 1; ; attempt += 1) {
      const refused = await this.#transact(Array.from({ length: shards }, (_, s) => remove(s)));
      if (refused === undefined) return true;
      if (!refused.transient) return false;
      if (attempt >= ATTEMPTS) throw refused.error;
    }
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

  /**
   * One transaction; undefined when it committed, else why not: a condition that did not hold
   * (with the items as they were), or a conflict worth another attempt (`transient`).
   */
  async #transact(
    items: ConstructorParameters<typeof TransactWriteItemsCommand>[0]['TransactItems'],
  ) {
    try {
      await this.#client.send(new TransactWriteItemsCommand({ TransactItems: items }));
      return undefined;
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') throw error;
      const reasons: CancellationReason[] =
        (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
      const failed = reasons.some((reason) => reason.Code === 'ConditionalCheckFailed');
      const transient = !failed && reasons.some((r) => TRANSIENT_CODES.has(r.Code ?? ''));
      return { error, reasons, transient };
    }
  }
}

/** The time of an entry as a refused condition returned its row (0 when absent). */
function atMsOf(item: Item | undefined, key: string): number {
  const atMs = Number(item?.[key]?.M?.at_ms?.N);
  return Number.isFinite(atMs) ? atMs : 0;
}
