/**
 * `isr rollback | hold | release`: the adapters wired to the use cases of `core/operate/rollback.ts`,
 * which hold every rule (checked against the META read, under a seized lease, CDN purged).
 */
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { DynamoTagIndex } from '../../lambda/adapters/tag-index/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import type { Clock } from '../../lambda/core/clock.js';
import type { CdnInvalidator } from '../../lambda/core/page/ports.js';
import type { PageOpsDeps } from '../../lambda/core/operate/rollback.js';
import type { Target } from '../target.js';

export { hold, release, rollback } from '../../lambda/core/operate/rollback.js';

export function pageOpsDeps(
  target: Pick<Target, 'clients' | 'tableName' | 'bucket' | 'settings'>,
  cdn: CdnInvalidator,
  clock: Clock,
): PageOpsDeps {
  const tables = { client: target.clients.dynamodb, tableName: target.tableName };
  return {
    cacheTable: new DynamoCacheTable(tables),
    history: new DynamoPageHistory(tables),
    bodies: new S3BodyStore({ client: target.clients.s3, bucket: target.bucket }),
    tagIndex: new DynamoTagIndex(tables),
    cdn,
    clock,
    leaseSeconds: target.settings.leaseSeconds,
    retention: target.settings.retention,
  };
}

/** `30s`, `30m`, `2h`, `1d` or plain seconds, as seconds; undefined when it is none of those. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)\s*(s|m|h|d)?$/.exec(text.trim());
  if (match === null) return undefined;
  const unit = { s: 1, m: 60, h: 3_600, d: 86_400 }[(match[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  const seconds = Number(match[1]) * unit;
  return seconds > 0 ? seconds : undefined;
}
