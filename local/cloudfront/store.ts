/**
 * The local CloudFront's cache: answers by cache key, with the cache tags the origin sent
 * (`CacheTagConfig`), and invalidation by path or by tag as CloudFront does it:
 * - tags are read from the configured header, comma-separated and trimmed, case-insensitive;
 *   only the first 50 of an object are kept ("Invalidating content by cache tags",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/invalidation-by-tags.html;
 *   "What you need to know when invalidating tags",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/invalidation-specifying-tags.html);
 * - a `#tag` item removes every object carrying the tag, whatever its cache key; a path item
 *   removes every object of that path (all its query strings, headers and cookies), and `*` at
 *   its end matches any rest ("What you need to know when invalidating files",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/invalidation-specifying-objects.html).
 * Bounded: the least recently used answers go first, as CloudFront may evict any object.
 */
import type { Pairs } from './requests.js';
import type { EdgeFreshness, StoredAge } from './ttl.js';

/** Tags CloudFront keeps per object. */
export const MAX_TAGS_PER_OBJECT = 50;

export interface StoredAnswer {
  readonly key: string;
  /** The request's raw path, for path invalidations. */
  readonly path: string;
  readonly status: number;
  /** As the origin sent them (what the viewer gets is derived at each hit). */
  readonly headers: Pairs;
  readonly body: Buffer;
  readonly tags: readonly string[];
  readonly freshness: EdgeFreshness;
  readonly age: StoredAge;
}

/** The tags of an origin answer's tag header, as CloudFront keeps them. */
export function tagsOf(value: string | undefined): string[] {
  if (value === undefined) return [];
  const tags = value
    .split(',')
    .map((tag) => tag.trim().toLowerCase())
    .filter((tag) => tag !== '');
  return [...new Set(tags)].slice(0, MAX_TAGS_PER_OBJECT);
}

export interface EdgeStoreOptions {
  /** @default 1000 */
  readonly maxObjects?: number;
  /** @default 64 MiB */
  readonly maxBytes?: number;
}

export class EdgeStore {
  readonly #objects = new Map<string, StoredAnswer>();
  readonly #maxObjects: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(options: EdgeStoreOptions = {}) {
    this.#maxObjects = options.maxObjects ?? 1000;
    this.#maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  }

  get size(): number {
    return this.#objects.size;
  }

  get(key: string): StoredAnswer | undefined {
    const found = this.#objects.get(key);
    if (found !== undefined) {
      this.#objects.delete(key);
      this.#objects.set(key, found); // most recently used last
    }
    return found;
  }

  put(answer: StoredAnswer): void {
    this.delete(answer.key);
    this.#objects.set(answer.key, answer);
    this.#bytes += answer.body.length;
    for (const key of this.#objects.keys()) {
      if (this.#objects.size <= this.#maxObjects && this.#bytes <= this.#maxBytes) break;
      this.delete(key);
    }
  }

  delete(key: string): void {
    const found = this.#objects.get(key);
    if (found === undefined) return;
    this.#objects.delete(key);
    this.#bytes -= found.body.length;
  }

  /** Removes what an invalidation's items name; returns how many objects went. */
  invalidate(items: readonly string[]): number {
    let removed = 0;
    for (const answer of [...this.#objects.values()]) {
      if (items.some((item) => invalidates(item, answer))) {
        this.delete(answer.key);
        removed += 1;
      }
    }
    return removed;
  }
}

function invalidates(item: string, answer: StoredAnswer): boolean {
  if (item.startsWith('#')) return answer.tags.includes(item.slice(1).toLowerCase());
  return item.endsWith('*') ? answer.path.startsWith(item.slice(0, -1)) : answer.path === item;
}
