/**
 * A gone path's row on DynamoDB (`META#GONE`, beside META): its shape, and the transaction that
 * writes it under the lease. Read with META by `readPageRows` (`pass-mark.ts`). Used by
 * `DynamoCacheTable`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { StoreGoneInput } from '../../../core/page/ports.js';
import type { GonePage } from '../../../core/page/model.js';
import { SortKey } from '../../../core/page/rows.js';
import { putInPlaceOfPublish } from './cancellation.js';
import { keyOf, num, str, type Item } from './items.js';

/** The row: FaceTheory-like names (`status_code`, `content_type`...) plus the body, inline. */
export const goneToItem = (gone: GonePage): Item => ({
  ...keyOf(gone.pk, SortKey.Gone),
  generated_at: { N: String(gone.generatedAt) },
  revalidate_seconds: { N: String(gone.revalidateSeconds) },
  status_code: { N: String(gone.statusCode) },
  content_type: { S: gone.contentType },
  body: { B: gone.body },
  etag: { S: gone.etag },
  ...(gone.headers === undefined
    ? {}
    : {
        response_headers: {
          M: Object.fromEntries(
            Object.entries(gone.headers).map(([name, value]) => [name, { S: value }]),
          ),
        },
      }),
  ...(gone.cacheKey === undefined ? {} : { cache_key: { S: gone.cacheKey } }),
  ...(gone.ttl === undefined ? {} : { ttl: { N: String(gone.ttl) } }),
});

export const itemToGone = (item: Item): GonePage => ({
  pk: str(item, 'pk') ?? '',
  generatedAt: num(item, 'generated_at') ?? 0,
  revalidateSeconds: num(item, 'revalidate_seconds') ?? 0,
  statusCode: num(item, 'status_code') ?? 404,
  contentType: str(item, 'content_type') ?? 'text/html',
  headers: headersOf(item),
  body: item.body?.B ?? new Uint8Array(),
  etag: str(item, 'etag') ?? '""',
  cacheKey: str(item, 'cache_key'),
  ttl: num(item, 'ttl'),
});

function headersOf(item: Item): GonePage['headers'] {
  const map = item.response_headers?.M;
  if (map === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(map).flatMap(([name, value]) =>
      value.S === undefined ? [] : [[name, value.S]],
    ),
  );
}

/**
 * Put META#GONE, Delete LOCK on this caller's live, unmarked lease: one TransactWriteItems of
 * two items (4 WCU while the row is under 1 KB). No body object is written.
 */
export const writeGonePage = async (
  client: DynamoDBClient,
  tableName: string,
  input: StoreGoneInput,
): Promise<void> =>
  putInPlaceOfPublish(client, tableName, input, {
    what: 'row',
    pk: input.gone.pk,
    item: goneToItem(input.gone),
  });
