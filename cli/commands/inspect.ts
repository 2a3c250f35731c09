/**
 * `isr inspect <url>`: everything the table and the bucket say about one page, read in one
 * Query of its partition (META, LOCK, REQ#, VER# share the pk) and one HeadObject.
 */
import { queryAll } from '../../lambda/adapters/shared/dynamodb/query-all.js';
import { HeadObjectCommand, NotFound } from '@aws-sdk/client-s3';
import {
  itemToHolder,
  itemToMeta,
  itemToVersion,
  num,
  str,
  type Item,
} from '../../lambda/adapters/shared/dynamodb/items.js';
import type { CacheKey, CacheMeta } from '../../lambda/core/page/model.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import type { LeaseHolder } from '../../lambda/core/errors.js';
import { isFresh, isHeld, secondsUntilStale } from '../../lambda/core/page/freshness.js';
import { SortKey, VERSION_PREFIX, versionIdOf } from '../../lambda/core/page/rows.js';
import type { Target } from '../target.js';

export interface RequestRowView {
  readonly key: string;
  readonly status: string | undefined;
  readonly createdAt: number | undefined;
  readonly expectedCompletion: number | undefined;
  readonly actualCompletion: number | undefined;
  readonly lockedBy: string | undefined;
  readonly error: string | undefined;
  readonly resultS3Key: string | undefined;
}

export interface VersionView {
  readonly id: string;
  readonly generatedAt: number;
  readonly s3Key: string;
  readonly etag: string | undefined;
  readonly statusCode: number | undefined;
  readonly live: boolean;
  /** Listed in META's `version_sks`: a rollback may go to it. */
  readonly kept: boolean;
}

export interface Inspection {
  readonly cacheKey: CacheKey;
  readonly now: number;
  readonly meta: CacheMeta | undefined;
  readonly freshness:
    | { readonly state: 'fresh' | 'stale'; readonly secondsLeft: number; readonly held: boolean }
    | undefined;
  readonly lock: (LeaseHolder & { readonly live: boolean }) | undefined;
  readonly requests: readonly RequestRowView[];
  readonly versions: readonly VersionView[];
  readonly body:
    | {
        readonly s3Key: string;
        readonly size: number | undefined;
        readonly etag: string | undefined;
      }
    | { readonly s3Key: string; readonly missing: true }
    | undefined;
}

export interface InspectDeps {
  readonly target: Pick<Target, 'clients' | 'tableName' | 'bucket'>;
  readonly clock: Clock;
}

export async function inspect(deps: InspectDeps, cacheKey: CacheKey): Promise<Inspection> {
  const now = epochSeconds(deps.clock);
  const items = await partitionOf(deps, cacheKey.pk);
  const bySk = (sk: string) => items.find((item) => str(item, 'sk') === sk);
  const metaItem = bySk(SortKey.Meta);
  const meta = metaItem === undefined ? undefined : itemToMeta(metaItem);
  const lockItem = bySk(SortKey.Lock);
  const holder = itemToHolder(lockItem);
  const kept = new Set(meta?.versionSks ?? []);
  return {
    cacheKey,
    now,
    meta,
    freshness:
      meta === undefined
        ? undefined
        : {
            state: isFresh(meta, now) ? 'fresh' : 'stale',
            secondsLeft: secondsUntilStale(meta, now),
            held: isHeld(meta, now),
          },
    lock: holder === undefined ? undefined : { ...holder, live: holder.expiresAt > now },
    requests: items.filter((item) => str(item, 'sk')?.startsWith('REQ#')).map(requestView),
    versions: items
      .filter((item) => str(item, 'sk')?.startsWith(VERSION_PREFIX))
      .map(itemToVersion)
      .sort((a, b) => (a.sk < b.sk ? 1 : -1))
      .map((version) => ({
        id: versionIdOf(version.sk),
        generatedAt: version.generatedAt,
        s3Key: version.s3Key,
        etag: version.etag,
        statusCode: version.statusCode,
        live: version.sk === meta?.currentSk,
        kept: kept.has(version.sk),
      })),
    body: meta === undefined ? undefined : await headBody(deps, meta.s3Key),
  };
}

function partitionOf(deps: InspectDeps, pk: string): Promise<Item[]> {
  return queryAll(deps.target.clients.dynamodb, {
    TableName: deps.target.tableName,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': 'pk' },
    ExpressionAttributeValues: { ':pk': { S: pk } },
    ConsistentRead: true,
  });
}

const requestView = (item: Item): RequestRowView => ({
  key: (str(item, 'sk') ?? '').slice('REQ#'.length),
  status: str(item, 'status'),
  createdAt: num(item, 'created_at'),
  expectedCompletion: num(item, 'expected_completion'),
  actualCompletion: num(item, 'actual_completion'),
  lockedBy: str(item, 'locked_by'),
  error: str(item, 'error'),
  resultS3Key: str(item, 'result_s3_key'),
});

async function headBody(deps: InspectDeps, s3Key: string): Promise<Inspection['body']> {
  try {
    const head = await deps.target.clients.s3.send(
      new HeadObjectCommand({ Bucket: deps.target.bucket, Key: s3Key }),
    );
    return { s3Key, size: head.ContentLength, etag: head.ETag };
  } catch (error) {
    if (error instanceof NotFound || (error as Error).name === 'NotFound') {
      return { s3Key, missing: true };
    }
    throw error;
  }
}
