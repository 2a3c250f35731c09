/**
 * Revalidations still being marked in the background, as the origin honours them. Before the
 * 202, each tag's entry (`<mode>#<tag>` -> its time and effect) is written to every shard of the
 * in-progress rows; the origin reads one shard (before META) and treats an older page carrying the
 * tag as marked already. A page's `generated_at` is its render START in whole seconds (floored),
 * so a render started in the revalidation's second (or within the clock skew margin) counts as
 * older: at most one extra regeneration, never a fresh page rendered before the revalidation.
 */
import type { CacheKey } from '../cache-key.js';
import type { Clock } from '../clock.js';
import type { InProgressEntry, RevalidationsInProgress } from '../ports.js';
import type { RevalidationMode } from './revalidation.js';

/** An in-progress state: entries by `<mode>#<tag>`. */
export type InProgressState = ReadonlyMap<string, InProgressEntry>;

/** The key of a tag's entry: `stale` and `expire` are separate entries, never merged. */
export const inProgressKey = (mode: RevalidationMode, tag: string): string => `${mode}#${tag}`;

/** What an in-progress revalidation makes of a page: STALE, MISS (`expire`), or nothing. */
export const InProgressVerdict = { Stale: 'stale', Expire: 'expire' } as const;
export type InProgressVerdict = (typeof InProgressVerdict)[keyof typeof InProgressVerdict];

/**
 * The one rule: a page carrying an in-progress tag, generated at or before the tag's second
 * (plus the skew margin), is served as the revalidation will leave it. `expire` outranks `stale`.
 */
export function inProgressVerdict(
  page: { readonly generatedAt: number; readonly tags?: readonly string[] | undefined },
  state: InProgressState,
  clockSkewMarginSeconds: number,
): InProgressVerdict | undefined {
  let verdict: InProgressVerdict | undefined;
  for (const tag of page.tags ?? []) {
    for (const mode of [InProgressVerdict.Expire, InProgressVerdict.Stale]) {
      const entry = state.get(inProgressKey(mode, tag));
      if (entry === undefined) continue;
      if (page.generatedAt > Math.floor(entry.atMs / 1000) + clockSkewMarginSeconds) continue;
      if (mode === InProgressVerdict.Expire) return mode;
      verdict = mode;
    }
  }
  return verdict;
}

/** The shard a request reads, from its cache key hash: requests spread over every shard. */
export const shardOf = (cacheKey: Pick<CacheKey, 'hash'>, shards: number): number =>
  Number.parseInt(cacheKey.hash.slice(0, 8), 16) % shards;

/** What the origin needs to honour background marking. */
export interface InProgressSettings {
  readonly rows: RevalidationsInProgress;
  /** Shards of the in-progress rows (distinct partitions, so no hot key). */
  readonly shards: number;
  /** How long a container reuses a read, counted from when the read started. */
  readonly cacheMs: number;
}

/**
 * A container's reads of the in-progress rows, each reused for `cacheMs` from when it STARTED.
 * The revalidate function waits `cacheMs` after writing before its 202, so a request that starts
 * after the 202 uses a read that started after the write (and is strongly consistent).
 */
export class InProgressReader {
  readonly #reads = new Map<string, { startedMs: number; state: Promise<InProgressState> }>();

  constructor(
    readonly settings: InProgressSettings,
    readonly clock: Clock,
  ) {}

  /** The state of the shard `cacheKey` reads. A failed read is not kept. */
  read(cacheKey: Pick<CacheKey, 'hash' | 'tenant'>): Promise<InProgressState> {
    const shard = shardOf(cacheKey, this.settings.shards);
    const id = `${cacheKey.tenant ?? ''}\u0000${shard}`;
    const now = this.clock.now();
    const kept = this.#reads.get(id);
    if (kept !== undefined && now - kept.startedMs < this.settings.cacheMs) return kept.state;
    const state = this.settings.rows.read(cacheKey.tenant, shard);
    this.#reads.set(id, { startedMs: now, state });
    state.catch(() => {
      if (this.#reads.get(id)?.state === state) this.#reads.delete(id);
    });
    return state;
  }
}
