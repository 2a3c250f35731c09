import { randomUUID } from 'node:crypto';
import {
  LeaseHeldError,
  LeaseLostError,
  NewerGenerationError,
  RequestAlreadyCompletedError,
  RevalidatedDuringRenderError,
} from '../../core/errors.js';
import { assertUnderLease, isLeaseLive } from '../../core/page/lease.js';
import type {
  AcquireLeaseInput,
  CacheTable,
  MarkPassInput,
  PublishInput,
  RecordFailureInput,
  RefreshInput,
  StoreGoneInput,
} from '../../core/page/ports.js';
import type { AcquiredLease, CacheMeta, Lease, PageRows } from '../../core/page/model.js';
import { RequestStatus } from '../../core/page/rows.js';
import { sealedEnding } from '../request-store/rows.js';
import { MemoryTable, type LockRow } from '../shared/memory-table.js';

const holderOf = (lock: LockRow | undefined) =>
  lock === undefined
    ? undefined
    : { token: lock.token, expiresAt: lock.expiresAt, owner: lock.owner };

/**
 * What the LOCK condition of a publish or a mark refuses: a marked, lost or expired lease. A
 * function, not a private method, so tests may wrap the table with `Object.create`.
 */
function lockRefusalOf(state: MemoryTable, lease: Lease, now: number): Error | undefined {
  const lock = state.locks.get(lease.pk);
  if (lock?.token === lease.token && lock.revalidatedBy !== undefined) {
    return new RevalidatedDuringRenderError(lease.pk);
  }
  if (lock?.token !== lease.token || !isLeaseLive(lock, now)) {
    return new LeaseLostError(lease.pk, holderOf(lock));
  }
  return undefined;
}

/** A revalidation marked or expired META since the render read it (`Guard.sameMark`). */
const markMoved = (observed: CacheMeta | undefined, live: CacheMeta | undefined): boolean =>
  (observed !== undefined && live === undefined) || live?.revalidatedBy !== observed?.revalidatedBy;

/**
 * The cache table in memory, with the conditions of `adapters/shared/dynamodb/conditions.ts` evaluated
 * in JavaScript: acquire only a free or expired LOCK, refresh and release only with the token,
 * publish atomically only with the token on an unexpired lease, never over a newer generation
 * nor over a revalidation's mark made since the render read META, and seal REQ# only while it is STARTED; a publish with a version writes its VER# row once; a
 * pass mark only under the same lease condition. Integration tests hold the real one to the same
 * rules.
 */
export class InMemoryCacheTable implements CacheTable {
  constructor(readonly state: MemoryTable = new MemoryTable()) {}

  getMeta(pk: string, _options?: { consistent?: boolean }): Promise<CacheMeta | undefined> {
    const meta = this.state.metas.get(pk);
    return Promise.resolve(meta === undefined ? undefined : { ...meta });
  }

  readPage(pk: string): Promise<PageRows> {
    const meta = this.state.metas.get(pk);
    const pass = this.state.passes.get(pk);
    const gone = this.state.gones.get(pk);
    return Promise.resolve({
      meta: meta === undefined ? undefined : { ...meta },
      pass: pass === undefined ? undefined : { ...pass },
      gone: gone === undefined ? undefined : { ...gone },
    });
  }

  storeGone(input: StoreGoneInput): Promise<void> {
    const { lease, gone, now } = input;
    assertUnderLease('row', gone.pk, lease);
    return this.#inPlaceOfPublish(lease, now, () => this.state.gones.set(gone.pk, { ...gone }));
  }

  markPass(input: MarkPassInput): Promise<void> {
    const { lease, mark, now } = input;
    assertUnderLease('mark', mark.pk, lease);
    return this.#inPlaceOfPublish(lease, now, () => {
      this.state.passes.set(mark.pk, { ...mark });
      this.state.metas.delete(mark.pk);
    });
  }

  /** A row written in place of a publish: only on the caller's live, unmarked lease; LOCK goes. */
  #inPlaceOfPublish(lease: Lease, now: number, write: () => void): Promise<void> {
    const refused = lockRefusalOf(this.state, lease, now);
    if (refused !== undefined) return Promise.reject(refused);
    write();
    this.state.locks.delete(lease.pk);
    return Promise.resolve();
  }

  acquireLease(input: AcquireLeaseInput): Promise<AcquiredLease> {
    const previous = this.state.locks.get(input.pk);
    if (input.seize !== true && previous !== undefined && isLeaseLive(previous, input.now)) {
      return Promise.reject(new LeaseHeldError(input.pk, holderOf(previous)));
    }
    const lease: Lease = {
      pk: input.pk,
      token: randomUUID(),
      expiresAt: input.now + input.durationSeconds,
      owner: input.owner,
    };
    this.state.locks.set(input.pk, {
      token: lease.token,
      expiresAt: lease.expiresAt,
      owner: lease.owner,
    });
    return Promise.resolve({ ...lease, takenOver: holderOf(previous) });
  }

  refreshLease(lease: Lease, input: { now: number; durationSeconds: number }): Promise<Lease> {
    const lock = this.state.locks.get(lease.pk);
    if (lock?.token !== lease.token) {
      return Promise.reject(new LeaseLostError(lease.pk, holderOf(lock)));
    }
    const expiresAt = input.now + input.durationSeconds;
    this.state.locks.set(lease.pk, { ...lock, expiresAt });
    return Promise.resolve({ ...lease, expiresAt });
  }

  releaseLease(lease: Lease): Promise<boolean> {
    if (this.state.locks.get(lease.pk)?.token !== lease.token) return Promise.resolve(false);
    this.state.locks.delete(lease.pk);
    return Promise.resolve(true);
  }

  publishGeneration(input: PublishInput): Promise<void> {
    const { lease, meta, now, seal } = input;
    assertUnderLease('META', meta.pk, lease);
    const refused = lockRefusalOf(this.state, lease, now);
    if (refused !== undefined) return Promise.reject(refused);
    const current = this.state.metas.get(meta.pk);
    if (current !== undefined && current.generatedAt > meta.generatedAt) {
      return Promise.reject(new NewerGenerationError(meta.pk, current.generatedAt));
    }
    if (markMoved(input.observed, current)) {
      return Promise.reject(new RevalidatedDuringRenderError(meta.pk));
    }
    const request =
      seal === undefined
        ? undefined
        : this.state.requests.get(MemoryTable.requestId(lease.pk, seal.idempotencyKey));
    if (seal !== undefined && request?.status !== RequestStatus.Started) {
      return Promise.reject(new RequestAlreadyCompletedError(lease.pk, seal.idempotencyKey));
    }
    const versionId =
      meta.currentSk === undefined ? undefined : MemoryTable.versionId(meta.pk, meta.currentSk);
    if (versionId !== undefined && this.state.versions.has(versionId)) {
      return Promise.reject(new Error(`version ${versionId} exists`));
    }
    this.state.metas.set(meta.pk, { ...meta });
    this.state.locks.delete(lease.pk);
    if (versionId !== undefined && meta.currentSk !== undefined) {
      // The generation's attributes: no TTL, no kept list, no hold (see `versionToItem`).
      const version = {
        ...meta,
        ttl: undefined,
        versionSks: undefined,
        holdUntil: undefined,
        held: undefined,
        released: undefined,
      };
      this.state.versions.set(versionId, { ...version, sk: meta.currentSk });
    }
    if (request !== undefined && seal !== undefined) {
      request.status = RequestStatus.Completed;
      request.ttl = seal.ttl;
      request.ending = sealedEnding({ s3Key: meta.s3Key, generatedAt: meta.generatedAt });
    }
    return Promise.resolve();
  }

  refreshGeneration(input: RefreshInput): Promise<void> {
    const { observed, meta } = input;
    const live = this.state.metas.get(observed.pk);
    if (live === undefined) return Promise.reject(new RevalidatedDuringRenderError(observed.pk));
    if (live.s3Key !== observed.s3Key || live.generatedAt !== observed.generatedAt) {
      return Promise.reject(new NewerGenerationError(observed.pk, live.generatedAt));
    }
    if (live.revalidatedBy !== observed.revalidatedBy) {
      return Promise.reject(new RevalidatedDuringRenderError(observed.pk));
    }
    if (live.holdUntil !== observed.holdUntil) {
      return Promise.reject(new LeaseLostError(observed.pk, undefined));
    }
    this.state.metas.set(observed.pk, {
      ...live,
      generatedAt: meta.generatedAt,
      revalidateSeconds: meta.revalidateSeconds,
      ttl: meta.ttl,
      modifiedAt: meta.modifiedAt,
      unchangedRenders: meta.unchangedRenders,
      revalidatedAt: undefined,
      revalidatedBy: undefined,
      failures: undefined,
    });
    return Promise.resolve();
  }

  recordFailure(input: RecordFailureInput): Promise<boolean> {
    const meta = this.state.metas.get(input.pk);
    if (
      meta === undefined ||
      meta.generatedAt !== input.observedGeneratedAt ||
      (meta.failures?.count ?? 0) !== input.previousCount
    ) {
      return Promise.resolve(false);
    }
    this.state.metas.set(input.pk, { ...meta, failures: input.record, ttl: input.ttl ?? meta.ttl });
    return Promise.resolve(true);
  }

  clearRevalidationMark(lease: Lease): Promise<boolean> {
    const lock = this.state.locks.get(lease.pk);
    if (lock?.token !== lease.token) return Promise.resolve(false);
    this.state.locks.set(lease.pk, { ...lock, revalidatedBy: undefined });
    return Promise.resolve(true);
  }
}
