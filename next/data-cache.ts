/**
 * Next's data cache (`fetch` with `force-cache`, `unstable_cache`, `'use cache'`) kept in this
 * process's memory, as Next's own default keeps it: entries are per instance, bounded in bytes
 * (least recently used out first), and trusted only while `TagTimes` says none of their tags was
 * revalidated since they were made, on any instance. Pages and route handlers are never kept
 * here: the service is their cache, and every regeneration renders them afresh.
 */
import type { TagTimes } from './tag-times.js';

/** Next's default `cacheMaxMemorySize`: 50 MB. */
export const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;
/** Larger entries are not kept (Next's own file-system cache refuses data entries over 2 MB). */
export const MAX_ENTRY_BYTES = 2 * 1024 * 1024;
/** How long a miss's time stamps the entry stored for it: longer than any render. */
const MISS_STAMP_MS = 60_000;
const MAX_MISSES = 10_000;

export interface KeptEntry<V> {
  readonly value: V;
  /** When the data was fetched, at the latest (this instance's clock, epoch ms). */
  readonly madeAtMs: number;
  /** The entry's own tags, as Next names them. */
  readonly tags: readonly string[];
  readonly bytes: number;
}

/** Entries by key, at most `maxBytes` in all: a get makes an entry the most recently used. */
export class ByteLru<V> {
  readonly #entries = new Map<string, KeptEntry<V>>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): KeptEntry<V> | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  /** Keeps `entry`, dropping the least recently used ones to make room; too large: not kept. */
  set(key: string, entry: KeptEntry<V>): void {
    this.delete(key);
    if (entry.bytes > Math.min(MAX_ENTRY_BYTES, this.maxBytes)) return;
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
    for (const [oldest, old] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= old.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  get bytes(): number {
    return this.#bytes;
  }
}

/**
 * The data cache of one process. An entry is stamped with the time of the miss that led to it
 * (the data was fetched after that miss, so a revalidation during the fetch makes it stale), or
 * with when it was stored if no miss was seen.
 */
export class DataCache<V> {
  readonly #lru: ByteLru<V>;
  readonly #misses = new Map<string, number>();

  constructor(
    maxBytes: number,
    readonly tagTimes: TagTimes,
    readonly now: () => number,
  ) {
    this.#lru = new ByteLru(maxBytes);
  }

  /**
   * The entry under `key` if `usable` (its own expiry) and current for its tags and `tags` (the
   * reader's soft tags); a miss is remembered, to stamp the entry stored for it.
   */
  async get(
    key: string,
    tags: readonly string[],
    usable: (entry: KeptEntry<V>) => boolean = () => true,
  ): Promise<KeptEntry<V> | undefined> {
    const entry = this.#lru.get(key);
    if (
      entry !== undefined &&
      usable(entry) &&
      (await this.tagTimes.isCurrent([...entry.tags, ...tags], entry.madeAtMs))
    ) {
      return entry;
    }
    if (entry !== undefined) this.#lru.delete(key);
    this.noteMiss(key);
    return undefined;
  }

  /** A read that will fetch the data again (a miss, or an entry Next revalidates in the background). */
  noteMiss(key: string): void {
    const now = this.now();
    const earlier = this.#misses.get(key);
    if (earlier !== undefined && now - earlier < MISS_STAMP_MS) return;
    this.#misses.delete(key);
    this.#misses.set(key, now);
    if (this.#misses.size > MAX_MISSES) {
      for (const [oldest] of this.#misses) {
        this.#misses.delete(oldest);
        if (this.#misses.size <= MAX_MISSES / 2) break;
      }
    }
  }

  /** Keeps `value`, made at `madeAtMs` or else stamped by its miss. */
  set(
    key: string,
    entry: { value: V; tags: readonly string[]; bytes: number; madeAtMs?: number | undefined },
  ): void {
    const now = this.now();
    const miss = this.#misses.get(key);
    this.#misses.delete(key);
    const stamped = miss !== undefined && now - miss < MISS_STAMP_MS ? miss : now;
    this.#lru.set(key, { ...entry, madeAtMs: Math.min(entry.madeAtMs ?? stamped, stamped) });
  }

  get bytes(): number {
    return this.#lru.bytes;
  }
}
