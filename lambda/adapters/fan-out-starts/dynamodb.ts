/**
 * The start of a revalidation's fan-outs on the cache table: per group of tags, one
 * TransactWriteItems of the status row (`detail`, `fan_outs` added, `started_tags`), every
 * in-progress shard (each tag's entry, one attribute each) and each tag's progress row. One
 * transaction for the group's every entry on every shard: started one tag at a time, the tags
 * of one revalidation cancelled each other (each transaction includes the same shard items, and
 * AWS cancels a transaction including an item an ongoing one includes:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
 * A group holds at most 100 actions (the TransactWriteItems limit,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html):
 * the status, the shards and `TAGS_PER_GROUP` rows at most. Cost: 2 WCU per item written.
 */
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { TransactionConflictError } from '../../core/errors.js';
import { sha256Hex } from '../../core/page/cache-key.js';
import { inProgressKey } from '../../core/page/in-progress.js';
import type { FanOutProgress, FanOutStart, FanOutStarts } from '../../core/revalidate/ports.js';
import { fanOutProgressItem } from '../fan-out-progress-rows/dynamodb.js';
import { IN_PROGRESS_SK, inProgressPartition } from '../revalidations-in-progress/keys.js';
import { revalidationStatusPartition, STATUS_SK } from '../revalidation-statuses/dynamodb.js';
import { transactOrCancelled } from '../shared/dynamodb/cancellation.js';
import { keyOf, type Item } from '../shared/dynamodb/items.js';
import { ExpiringRowsAdapter } from '../shared/dynamodb/table.js';

/** Tags one transaction starts at most: its expressions stay far under DynamoDB's 4 KB. */
export const TAGS_PER_GROUP = 25;
/** Attempts of one group whose conditions moved under it (a later entry, a tag started). */
const ATTEMPTS = 5;

/** How `started_tags` names a tag: short, whatever the tag's length. */
export const startedTagId = (tag: string): string => sha256Hex(tag).slice(0, 16);

export class DynamoFanOutStarts extends ExpiringRowsAdapter implements FanOutStarts {
  async start(start: FanOutStart): Promise<readonly string[]> {
    const size = Math.max(1, Math.min(TAGS_PER_GROUP, 99 - start.shards));
    const started: string[] = [];
    for (let at = 0; at < start.fanOuts.length; at += size) {
      started.push(...(await this.#startGroup(start, start.fanOuts.slice(at, at + size))));
    }
    return started;
  }

  /**
   * One group. A condition that did not hold is read from the items it returns: a tag the
   * effect started before leaves the group, an entry a later time holds is written one
   * millisecond past it (the last writer owns it), and the group is tried again.
   */
  async #startGroup(start: FanOutStart, group: readonly FanOutProgress[]): Promise<string[]> {
    let pending = [...group];
    const times = new Map(group.map((fanOut) => [fanOut.tag, start.atMs]));
    for (let attempt = 1; pending.length > 0; attempt++) {
      const items = [
        this.#status(start, pending),
        ...Array.from({ length: start.shards }, (_, shard) =>
          this.#entries(start, shard, pending, times),
        ),
        ...pending.map((fanOut) => ({
          Put: { TableName: this.table, Item: fanOutProgressItem(fanOut) },
        })),
      ];
      const refused = await transactOrCancelled(this.db, items);
      if (refused === undefined) return pending.map((fanOut) => fanOut.tag);
      if (!refused.failed && !refused.conflict) throw refused.error;
      if (refused.conflict) {
        throw new TransactionConflictError(`fan-outs of ${start.status.effectId} conflicted`, {
          cause: refused.error,
        });
      }
      if (attempt >= ATTEMPTS) throw refused.error;
      const [status, ...shards] = refused.reasons;
      const before = new Set(status?.Item?.started_tags?.SS ?? []);
      pending = pending.filter((fanOut) => !before.has(startedTagId(fanOut.tag)));
      for (const reason of shards.slice(0, start.shards)) {
        for (const fanOut of pending) {
          const held = atMsOf(reason.Item, inProgressKey(fanOut.mode, fanOut.tag));
          times.set(fanOut.tag, Math.max(times.get(fanOut.tag) ?? 0, held + 1));
        }
      }
    }
    return [];
  }

  /** The status: the accept's detail, the group counted, each tag marked started (only once). */
  #status(start: FanOutStart, group: readonly FanOutProgress[]): TransactWriteItem {
    const ids = group.map((fanOut) => startedTagId(fanOut.tag));
    const notStarted = ids.map((_, index) => `NOT contains(started_tags, :s${index})`);
    return {
      Update: {
        TableName: this.table,
        Key: keyOf(revalidationStatusPartition(start.status.effectId), STATUS_SK),
        UpdateExpression:
          'SET detail = :detail, #ttl = if_not_exists(#ttl, :ttl) ADD fan_outs :count, started_tags :started',
        ConditionExpression: notStarted.join(' AND '),
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':detail': { S: JSON.stringify(start.status) },
          ':ttl': { N: String(this.ttlAfter(start.status.acceptedAtMs)) },
          ':count': { N: String(group.length) },
          ':started': { SS: ids },
          ...Object.fromEntries(ids.map((id, index) => [`:s${index}`, { S: id }])),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }

  /** One shard: each tag's entry set when absent or not later than its time. */
  #entries(
    start: FanOutStart,
    shard: number,
    group: readonly FanOutProgress[],
    times: ReadonlyMap<string, number>,
  ): TransactWriteItem {
    const names: Record<string, string> = {};
    const values: Item = {};
    const sets: string[] = [];
    const conditions: string[] = [];
    group.forEach((fanOut, index) => {
      const atMs = times.get(fanOut.tag) ?? start.atMs;
      names[`#e${index}`] = inProgressKey(fanOut.mode, fanOut.tag);
      values[`:a${index}`] = { N: String(atMs) };
      values[`:v${index}`] = {
        M: { at_ms: { N: String(atMs) }, effect_id: { S: start.status.effectId } },
      };
      sets.push(`#e${index} = :v${index}`);
      // A time never goes back: set when absent or not later than this one.
      conditions.push(`(attribute_not_exists(#e${index}) OR #e${index}.at_ms <= :a${index})`);
    });
    return {
      Update: {
        TableName: this.table,
        Key: keyOf(inProgressPartition(start.status.tenant, shard), IN_PROGRESS_SK),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
}

/** The time of an entry as a refused condition returned its row (0 when absent). */
function atMsOf(item: Item | undefined, key: string): number {
  const atMs = Number(item?.[key]?.M?.at_ms?.N);
  return Number.isFinite(atMs) ? atMs : 0;
}
