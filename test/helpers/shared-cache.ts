/**
 * A CloudFront edge as far as tests of purges need one: it keeps an answer for its `s-maxage`
 * (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/Expiration.html), never
 * a `private` or `no-store` one, and drops every object carrying a tag a purge names, tags read
 * from the cache-tag header, comma-separated and case-insensitive
 * (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/invalidation-by-tags.html).
 * It is the `CdnInvalidator` a use case is given, so a purge the use case leaves out is one the
 * edge never gets.
 */
import type { Clock } from '../../lambda/core/clock.js';
import type { CdnInvalidator, CdnPurge } from '../../lambda/core/page/ports.js';

interface Kept<T> {
  readonly answer: T;
  readonly until: number;
  readonly tags: ReadonlySet<string>;
}

export interface EdgeAnswer {
  readonly headers: Readonly<Record<string, string>>;
}

export class TestEdgeCache<T extends EdgeAnswer> implements CdnInvalidator {
  readonly #kept = new Map<string, Kept<T>>();
  readonly purges: string[][] = [];

  constructor(
    private readonly clock: Clock,
    private readonly tagHeader: string,
  ) {}

  /** The kept answer while it lasts (`from: 'edge'`), else the origin's, kept if it may be. */
  async get(key: string, origin: () => Promise<T>): Promise<T & { from: 'edge' | 'origin' }> {
    const kept = this.#kept.get(key);
    if (kept !== undefined && this.clock.now() < kept.until)
      return { ...kept.answer, from: 'edge' };
    const answer = await origin();
    const seconds = sharedMaxAge(answer.headers['cache-control'] ?? '');
    if (seconds > 0) {
      const tags = (answer.headers[this.tagHeader] ?? '').split(',').map(normalised);
      this.#kept.set(key, {
        answer,
        until: this.clock.now() + seconds * 1000,
        tags: new Set(tags.filter((tag) => tag !== '')),
      });
    }
    return { ...answer, from: 'origin' };
  }

  invalidateTags(tags: readonly string[]): Promise<CdnPurge> {
    const purged = tags.map(normalised);
    this.purges.push(purged);
    for (const [key, kept] of this.#kept) {
      if (purged.some((tag) => kept.tags.has(tag))) this.#kept.delete(key);
    }
    return Promise.resolve({ status: 'submitted', invalidationIds: [`E${this.purges.length}`] });
  }
}

const normalised = (tag: string): string => tag.trim().toLowerCase();

/** `s-maxage`, else `max-age`; 0 for an answer no shared cache may keep. */
function sharedMaxAge(cacheControl: string): number {
  const directives = cacheControl.toLowerCase();
  if (/\b(private|no-store)\b/.test(directives)) return 0;
  const match = /\bs-maxage=(\d+)/.exec(directives) ?? /\bmax-age=(\d+)/.exec(directives);
  return match === null ? 0 : Number(match[1]);
}
