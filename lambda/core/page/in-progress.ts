/**
 * Revalidations still being marked in the background, as the origin honours them. Before the
 * 202, each tag's entry (`<mode>#<tag>` -> its time and effect) is written to every shard of the
 * in-progress rows; the origin reads one shard (before META) and treats an older page carrying the
 * tag as marked already. A page's `generated_at` is its render START in whole seconds (floored),
 * so a render started in the revalidation's second (or within the clock skew margin) counts as
 * older: at most one extra regeneration, never a fresh page rendered before the revalidation.
 */
import type { CacheKey, RevalidationMode } from './model.js';
import type { Clock } from '../clock.js';
import { systemRandom, type Random } from '../random.js';
import type { InProgressEntry, RevalidationsInProgress } from './ports.js';

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
 * after the 202 uses a read that started after the write (and is strongly consistent). Every
 * shard holds every entry, so a container reads ONE shard, picked at random when it starts:
 * containers spread over the shards (no hot key), and a busy container reads one item per
 * `cacheMs`, not one per shard.
 */
export class InProgressReader {
  readonly #reads = new Map<string, { startedMs: number; state: Promise<InProgressState> }>();
  readonly #shard: number;

  constructor(
    readonly settings: InProgressSettings,
    readonly clock: Clock,
    random: Random = systemRandom,
  ) {
    this.#shard = Math.min(settings.shards - 1, Math.floor(random() * settings.shards));
  }

  /** The state of this container's shard, for `cacheKey`'s tenant. A failed read is not kept. */
  read(cacheKey: Pick<CacheKey, 'tenant'>): Promise<InProgressState> {
    const id = cacheKey.tenant ?? '';
    const now = this.clock.now();
    const kept = this.#reads.get(id);
    if (kept !== undefined && now - kept.startedMs < this.settings.cacheMs) return kept.state;
    const state = this.settings.rows.read(cacheKey.tenant, this.#shard);
    this.#reads.set(id, { startedMs: now, state });
    state.catch(() => {
      if (this.#reads.get(id)?.state === state) this.#reads.delete(id);
    });
    return state;
  }
}
