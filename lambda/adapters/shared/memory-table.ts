/**
 * The state the in-memory fakes share, shaped like the rows of the cache table: META, LOCK and
 * REQ# per partition. One object, so a publish can seal the REQ# row the claim store wrote, as
 * the real transaction does.
 */
import type { CacheMeta, PageVersion, PassMark } from '../../core/page/model.js';
import type { FanOutProgress } from '../../core/revalidate/ports.js';
import type { InProgressEntry } from '../../core/page/ports.js';
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
}
