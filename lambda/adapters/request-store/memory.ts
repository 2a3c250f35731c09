import { ClaimRefused, RequestStoreBase } from './base.js';
import { recordedOutcomeOf, settledEnding, type NewClaim, type RequestRow } from './rows.js';
import type { Clock } from '../../core/clock.js';
import type { JsonValue, RecordedOutcome } from '../../core/idempotency.js';
import { RequestStatus } from '../../core/page/rows.js';
import { MemoryTable, type RequestRowState } from '../shared/memory-table.js';

/** REQ# rows in memory, with the claim and release rules `RequestStoreBase` states. */
export class InMemoryRequestStore extends RequestStoreBase {
  constructor(
    readonly state: MemoryTable,
    clock: Clock,
  ) {
    super(clock);
  }

  protected insertClaim(claim: NewClaim, nowMs: number): Promise<void> {
    const id = MemoryTable.requestId(claim.pk, claim.key);
    const existing = this.state.requests.get(id);
    const free =
      existing === undefined ||
      existing.ttl < nowMs / 1000 ||
      (existing.status === RequestStatus.Started &&
        existing.inProgressExpiresAtMs !== undefined &&
        existing.inProgressExpiresAtMs < nowMs);
    if (!free) return Promise.reject(new ClaimRefused(rowOf(existing)));
    this.state.requests.set(id, {
      status: RequestStatus.Started,
      claimToken: claim.claimToken,
      requestHash: claim.requestHash,
      ttl: claim.ttl,
      inProgressExpiresAtMs: claim.inProgressExpiresAtMs,
      createdAt: claim.createdAt,
      lockedBy: claim.lockedBy,
      request: claim.request,
    });
    return Promise.resolve();
  }

  protected readRow(pk: string, key: string): Promise<RequestRow | undefined> {
    const row = this.state.requests.get(MemoryTable.requestId(pk, key));
    return Promise.resolve(row === undefined ? undefined : rowOf(row));
  }

  protected writeSettlement(
    pk: string,
    key: string,
    outcome: RecordedOutcome,
    times: { ttl: number },
  ): Promise<void> {
    const row = this.state.requests.get(MemoryTable.requestId(pk, key));
    if (row !== undefined) {
      const ending = settledEnding(outcome);
      row.ending = ending;
      row.status = ending.status;
      row.ttl = times.ttl;
    }
    return Promise.resolve();
  }

  protected deleteOwnClaim(pk: string, key: string, claimToken: string): Promise<void> {
    const id = MemoryTable.requestId(pk, key);
    const row = this.state.requests.get(id);
    if (row?.status === RequestStatus.Started && row.claimToken === claimToken) {
      this.state.requests.delete(id);
    }
    return Promise.resolve();
  }
}

function rowOf(row: RequestRowState): RequestRow {
  return {
    status: row.status,
    requestHash: row.requestHash,
    ttl: row.ttl,
    inProgressExpiresAtMs: row.inProgressExpiresAtMs,
    claimToken: row.claimToken,
    request: row.request === undefined ? undefined : (JSON.parse(row.request) as JsonValue),
    outcome:
      row.status === RequestStatus.Started || row.ending === undefined
        ? undefined
        : recordedOutcomeOf(row.ending),
  };
}
