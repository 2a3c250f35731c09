import { randomUUID } from 'node:crypto';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import {
  IdempotencyItemAlreadyExistsError,
  IdempotencyItemNotFoundError,
  IdempotencyRecordStatus,
  type IdempotencyConfig,
} from '@aws-lambda-powertools/idempotency';
import {
  BasePersistenceLayer,
  IdempotencyRecord,
} from '@aws-lambda-powertools/idempotency/persistence';
import { epochSeconds, systemClock, type Clock } from '../../core/clock.js';
import type {
  ClaimState,
  IdempotentCall,
  JsonValue,
  RecordedOutcome,
} from '../../core/idempotency.js';
import { RequestStatus } from '../../core/page/rows.js';
import type { NewClaim, RequestRow } from './rows.js';

/** Where a claim was refused: the row that holds the key. */
export class ClaimRefused extends Error {
  override readonly name = 'ClaimRefused';
  constructor(readonly existing: RequestRow | undefined) {
    super('the idempotency key is already claimed');
  }
}

/**
 * Powertools idempotency over REQ# rows located by the call itself (`pk`, `sk = REQ#<key>`).
 * Powertools keeps the claim/replay/validation flow; this base maps its records to rows and
 * reads every time from the injected clock (Powertools' own reads `Date.now()`), so tests freeze
 * time instead of sleeping. Subclasses only do the I/O, under these rules:
 * - `insertClaim` succeeds when the key has no row, the row outlived its TTL, or it is STARTED
 *   and past its in-progress expiry; else it throws `ClaimRefused` with the row;
 * - `deleteOwnClaim` deletes only a STARTED row that still carries this claim token.
 */
export abstract class RequestStoreBase extends BasePersistenceLayer {
  readonly #clock: Clock;
  /** The token of each claim this instance holds, by idempotency key, until released or settled. */
  readonly #claims = new Map<string, string>();
  #config: IdempotencyConfig | undefined;
  #remainingMs: number | undefined;
  #request: string | undefined;

  constructor(clock: Clock = systemClock) {
    super();
    this.#clock = clock;
  }

  protected abstract insertClaim(claim: NewClaim, nowMs: number): Promise<void>;
  protected abstract readRow(pk: string, key: string): Promise<RequestRow | undefined>;
  protected abstract writeSettlement(
    pk: string,
    key: string,
    outcome: RecordedOutcome,
    times: { ttl: number; now: number },
  ): Promise<void>;
  protected abstract deleteOwnClaim(pk: string, key: string, claimToken: string): Promise<void>;

  /** The record key names the row itself: the call's partition and key. */
  protected override getHashedIdempotencyKey(data: JSONValue): string {
    const { pk, key } = (data ?? {}) as Partial<IdempotentCall>;
    if (typeof pk !== 'string' || typeof key !== 'string' || !pk || !key) {
      throw new Error('an idempotent call needs a pk and a key');
    }
    return JSON.stringify([pk, key]);
  }

  /** Keeps the idempotency config: its Lambda context says who claims. */
  override configure(options: Parameters<BasePersistenceLayer['configure']>[0]): void {
    super.configure(options);
    this.#config = options.config;
  }

  /**
   * Powertools computes the in-progress expiry from `Date.now()` and hands `_putRecord` only the
   * record: keep the time left so the claim is timed on the injected clock instead. `_putRecord`
   * is called synchronously by `super.saveInProgress`, before its first await, so concurrent
   * claims on one instance each read their own value. That order, and every other one this base
   * relies on, is pinned by test/lambda/adapters/request-store/base.unit.test.ts.
   */
  override async saveInProgress(data: JSONValue, remainingTimeInMillis?: number): Promise<void> {
    this.#remainingMs = remainingTimeInMillis;
    this.#request = canonicalJson((data as unknown as IdempotentCall).request);
    await super.saveInProgress(data, remainingTimeInMillis);
  }

  /**
   * The request a key was first used with, for the diff a reuse with another body gets (the
   * row keeps it as canonical JSON); undefined when there is no row.
   */
  async firstRequest(pk: string, key: string): Promise<JsonValue | undefined> {
    return (await this.readRow(pk, key))?.request;
  }

  async claimOf(pk: string, key: string): Promise<ClaimState | undefined> {
    const row = await this.readRow(pk, key);
    if (row === undefined) return undefined;
    const started = row.status === RequestStatus.Started;
    return {
      token: row.claimToken,
      inProgressExpiresAtMs: started ? row.inProgressExpiresAtMs : undefined,
    };
  }

  heldClaim(pk: string, key: string): string | undefined {
    return this.#claims.get(JSON.stringify([pk, key]));
  }

  protected async _putRecord(record: IdempotencyRecord): Promise<void> {
    const [pk, key] = keyOf(record.idempotencyKey);
    const remainingMs = this.#remainingMs;
    const request = this.#request;
    this.#remainingMs = undefined;
    this.#request = undefined;
    const context = this.#config?.lambdaContext;
    const nowMs = this.#clock.now();
    const claimToken = randomUUID();
    try {
      await this.insertClaim(
        {
          pk,
          key,
          claimToken,
          requestHash: record.payloadHash,
          ttl: this.#expiry(),
          inProgressExpiresAtMs: remainingMs === undefined ? undefined : nowMs + remainingMs,
          createdAt: Math.floor(nowMs / 1000),
          lockedBy:
            context === undefined ? undefined : `${context.functionName}/${context.awsRequestId}`,
          request,
        },
        nowMs,
      );
      this.#claims.set(record.idempotencyKey, claimToken);
    } catch (error) {
      if (!(error instanceof ClaimRefused)) throw error;
      throw new IdempotencyItemAlreadyExistsError(
        `idempotency key ${record.idempotencyKey} was already claimed`,
        error.existing === undefined
          ? undefined
          : this.#recordOf(record.idempotencyKey, error.existing),
      );
    }
  }

  protected async _getRecord(idempotencyKey: string): Promise<IdempotencyRecord> {
    const row = await this.readRow(...keyOf(idempotencyKey));
    if (row === undefined) throw new IdempotencyItemNotFoundError();
    return this.#recordOf(idempotencyKey, row);
  }

  /** Writes the settlement the use case chose; a row its publish already sealed is left alone. */
  protected async _updateRecord(record: IdempotencyRecord): Promise<void> {
    this.#claims.delete(record.idempotencyKey);
    const outcome = record.responseData as unknown as RecordedOutcome;
    if (outcome.settlement === 'sealed-by-publish') return;
    await this.writeSettlement(...keyOf(record.idempotencyKey), outcome, {
      ttl: this.#expiry(),
      now: epochSeconds(this.#clock),
    });
  }

  /** Releases this instance's own claim after a failure, so a retry can take the key again. */
  protected async _deleteRecord(record: IdempotencyRecord): Promise<void> {
    const claimToken = this.#claims.get(record.idempotencyKey);
    this.#claims.delete(record.idempotencyKey);
    if (claimToken !== undefined) {
      await this.deleteOwnClaim(...keyOf(record.idempotencyKey), claimToken);
    }
  }

  /** When DynamoDB TTL may collect a row written now. */
  #expiry(): number {
    return epochSeconds(this.#clock) + this.getExpiresAfterSeconds();
  }

  #recordOf(idempotencyKey: string, row: RequestRow): IdempotencyRecord {
    return new ClockedRecord(this.#clock, {
      idempotencyKey,
      status:
        row.status === RequestStatus.Started
          ? IdempotencyRecordStatus.INPROGRESS
          : IdempotencyRecordStatus.COMPLETED,
      expiryTimestamp: row.ttl,
      inProgressExpiryTimestamp: row.inProgressExpiresAtMs,
      payloadHash: row.requestHash,
      responseData: row.outcome as unknown as JSONValue,
    });
  }
}

/** A record whose expiry is judged on the injected clock. */
class ClockedRecord extends IdempotencyRecord {
  readonly #clock: Clock;

  constructor(clock: Clock, config: ConstructorParameters<typeof IdempotencyRecord>[0]) {
    super(config);
    this.#clock = clock;
  }

  override isExpired(): boolean {
    return this.expiryTimestamp !== undefined && this.#clock.now() / 1000 > this.expiryTimestamp;
  }
}

const keyOf = (idempotencyKey: string) => JSON.parse(idempotencyKey) as [string, string];

/** JSON with object keys sorted at every level: equal requests give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
