/**
 * The state the in-memory fakes share, shaped like the rows of the cache table: META, LOCK and
 * REQ# per partition. One object, so a publish can seal the REQ# row the claim store wrote, as
 * the real transaction does.
 */
import type { CacheMeta, GonePage, PageVersion, PassMark } from '../../core/page/model.js';
import type { FanOutProgress } from '../../core/revalidate/ports.js';
import type { InProgressEntry, TagPageCount } from '../../core/page/ports.js';
import type { RequestStatus } from '../../core/page/rows.js';
import type { RowEnding } from '../request-store/rows.js';

export interface LockRow {
  readonly token: string;
  readonly expiresAt: number;
  readonly owner: string | undefined;
  /** Set by a revalidation while the lease is held. */
  readonly revalidatedBy?: string | undefined;
}

export interface RequestRowState {
  status: RequestStatus;
  claimToken: string | undefined;
  requestHash: string | undefined;
  ttl: number;
  inProgressExpiresAtMs: number | undefined;
  createdAt: number | undefined;
  lockedBy: string | undefined;
  /** Canonical JSON of the request the key was first used with. */
  request?: string | undefined;
  /** How the row ended (a settlement, or the publish that sealed it), as it is kept. */
  ending?: RowEnding | undefined;
}

export class MemoryTable {
  readonly metas = new Map<string, CacheMeta>();
  readonly locks = new Map<string, LockRow>();
  /** META#PASS rows (hit-for-pass marks). */
  readonly passes = new Map<string, PassMark>();
  /** META#GONE rows (a gone path's inline 404 or 410). */
  readonly gones = new Map<string, GonePage>();
  readonly requests = new Map<string, RequestRowState>();
  /** VER# rows, by `versionId(pk, sk)`. */
  readonly versions = new Map<string, PageVersion>();
  /** `TAG#<tenant>#<tag>` -> the page pks indexed under it. */
  readonly tagPages = new Map<string, Set<string>>();
  /** `TAG#<tenant>#<tag>` -> when it was last revalidated (epoch ms). */
  readonly tagRevalidatedAt = new Map<string, number>();
  /** `REVALIDATING#<tenant>#<shard>` -> its entries by `<mode>#<tag>`. */
  readonly inProgress = new Map<string, Map<string, InProgressEntry>>();
  /** FANOUT rows, by sort key. */
  readonly fanOuts = new Map<string, FanOutProgress>();

  static requestId = (pk: string, key: string): string => `${pk}\u0000REQ#${key}`;
  static versionId = (pk: string, sk: string): string => `${pk}\u0000${sk}`;
  static tagKey = (tenant: string | undefined, tag: string): string =>
    `TAG#${tenant ?? '_'}#${tag}`;

  /** The pages a tag indexes: exact up to `limit`; past it the true size, as the estimate aims at. */
  countTagPages(tenant: string | undefined, tag: string, limit: number): TagPageCount {
    const size = this.tagPages.get(MemoryTable.tagKey(tenant, tag))?.size ?? 0;
    return { count: size, exact: size <= limit };
  }

  /** Each row goes only while META does not carry its tag and no LOCK is held, as on DynamoDB. */
  removeTagRows(tenant: string | undefined, pk: string, tags: readonly string[]): string[] {
    const removed: string[] = [];
    for (const tag of new Set(tags)) {
      if (this.metas.get(pk)?.tags?.includes(tag) === true) continue;
      if (this.locks.has(pk)) continue;
      this.tagPages.get(MemoryTable.tagKey(tenant, tag))?.delete(pk);
      removed.push(tag);
    }
    return removed;
  }

  /** When each of `tags` was last revalidated; never: absent. */
  tagTimes(tenant: string | undefined, tags: readonly string[]): Map<string, number> {
    const found = new Map<string, number>();
    for (const tag of tags) {
      const at = this.tagRevalidatedAt.get(MemoryTable.tagKey(tenant, tag));
      if (at !== undefined) found.set(tag, at);
    }
    return found;
  }
}
