/**
 * `isr stuck` and `isr failed`: the work that needs an operator's eye, read from the sparse status
 * index (`core/rows.ts`) by Query on each of its shards, never by Scan: STARTED past its
 * expected completion, LOCKs past their expiry (abandoned), FAILED REQ# rows and broken pages.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { num, str, type Item } from '../../lambda/adapters/dynamodb/items.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import { IndexedStatus, StatusIndex, statusShards } from '../../lambda/core/rows.js';
import type { Target } from '../target.js';

export interface StatusRow {
  readonly kind: 'started' | 'abandoned-lease' | 'failed' | 'broken';
  readonly pk: string;
  readonly sk: string;
  /** The page, when the row names it (META's `cache_key`, a REQ# row's request). */
  readonly cacheKey: string | undefined;
  /** `status_at`: when it should have finished, when the lease ran out, or when it failed. */
  readonly at: number;
  /** Seconds past `at` (stuck rows) or since it failed. */
  readonly ageSeconds: number;
  readonly owner: string | undefined;
  readonly error: string | undefined;
}

export interface StatusDeps {
  readonly target: Pick<Target, 'clients' | 'tableName'>;
  readonly clock: Clock;
  /** Most rows read per status and shard. @default 100 */
  readonly limit?: number | undefined;
}

/** STARTED past its expected completion, and LOCKs past their expiry: work nobody is finishing. */
export async function stuck(deps: StatusDeps): Promise<StatusRow[]> {
  const now = epochSeconds(deps.clock);
  const [started, leases] = await Promise.all([
    queryStatus(deps, IndexedStatus.Started, now),
    queryStatus(deps, IndexedStatus.Lease, now),
  ]);
  return [
    ...started.map((item) => rowOf('started', item, now)),
    ...leases.map((item) => rowOf('abandoned-lease', item, now)),
  ];
}

/** FAILED REQ# rows (with their error) and pages whose regenerations keep failing. */
export async function failed(deps: StatusDeps): Promise<StatusRow[]> {
  const now = epochSeconds(deps.clock);
  const [failures, broken] = await Promise.all([
    queryStatus(deps, IndexedStatus.Failed),
    queryStatus(deps, IndexedStatus.Broken),
  ]);
  return [
    ...failures.map((item) => rowOf('failed', item, now)),
    ...broken.map((item) => rowOf('broken', item, now)),
  ];
}

/** Every shard of `status`, oldest first; with `before`, only rows whose `status_at` is earlier. */
async function queryStatus(
  deps: StatusDeps,
  status: IndexedStatus,
  before?: number,
): Promise<Item[]> {
  const limit = deps.limit ?? 100;
  const perShard = await Promise.all(
    statusShards(status).map(async (shard) => {
      const items: Item[] = [];
      let start: Item | undefined;
      do {
        const page = await deps.target.clients.dynamodb.send(
          new QueryCommand({
            TableName: deps.target.tableName,
            IndexName: StatusIndex.Name,
            KeyConditionExpression:
              before === undefined ? '#shard = :shard' : '#shard = :shard AND #at < :before',
            ExpressionAttributeNames: {
              '#shard': StatusIndex.PartitionKey,
              ...(before === undefined ? {} : { '#at': StatusIndex.SortKey }),
            },
            ExpressionAttributeValues: {
              ':shard': { S: shard },
              ...(before === undefined ? {} : { ':before': { N: String(before) } }),
            },
            Limit: limit - items.length,
            ExclusiveStartKey: start,
          }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start !== undefined && items.length < limit);
      return items;
    }),
  );
  return perShard
    .flat()
    .sort((a, b) => (num(a, StatusIndex.SortKey) ?? 0) - (num(b, StatusIndex.SortKey) ?? 0));
}

function rowOf(kind: StatusRow['kind'], item: Item, now: number): StatusRow {
  const at = num(item, StatusIndex.SortKey) ?? 0;
  return {
    kind,
    pk: str(item, 'pk') ?? '',
    sk: str(item, 'sk') ?? '',
    cacheKey: str(item, 'cache_key') ?? requestedKey(item),
    at,
    ageSeconds: now - at,
    owner: str(item, 'locked_by') ?? str(item, 'lease_owner'),
    error: str(item, 'error') ?? str(item, 'regen_error'),
  };
}

/** A REQ# row keeps the intent it claimed (`request`, JSON with `cacheKey`). */
function requestedKey(item: Item): string | undefined {
  const request = str(item, 'request');
  if (request === undefined) return undefined;
  try {
    const parsed = JSON.parse(request) as { cacheKey?: unknown };
    return typeof parsed.cacheKey === 'string' ? parsed.cacheKey : undefined;
  } catch {
    return undefined;
  }
}
