import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import type { RecordedOutcome } from '../core/idempotency.js';

/**
 * Powertools idempotency for an `IdempotentCall`: keyed by the call's `key` (the row is located
 * by `pk` + `key`, see `RequestRowStore`), validated on `request` (stored as `request_hash`,
 * sha256), replays flagged so they are logged as `duplicate`.
 */
export const createIdempotencyConfig = (ttlSeconds: number): IdempotencyConfig =>
  new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    throwOnNoIdempotencyKey: true,
    payloadValidationJmesPath: 'request',
    hashFunction: 'sha256',
    expiresAfterSeconds: ttlSeconds,
    responseHook: (response) => ({ ...(response as unknown as RecordedOutcome), replayed: true }),
  });
