/**
 * The CDN of `npm start`, which has none: each purge is recorded (for tests and the local
 * tools) and printed as one line with the `#tag` items CloudFront would have been sent.
 */
import { CDN_TAG_ITEM_PREFIX, purgeTagsOf } from '../../core/cdn-purge.js';
import type { CdnInvalidator, CdnPurge, CdnPurgeOptions } from '../../core/page/ports.js';

/** One purge as the local CDN received it. */
export interface LocalPurge {
  readonly invalidationId: string;
  /** `#`-prefixed, deduplicated, lower-cased, as CloudFront would get them. */
  readonly items: readonly string[];
  readonly effectId: string | undefined;
}

/** Records and prints purges instead of invalidating a CDN. */
export class LocalCdnInvalidator implements CdnInvalidator {
  readonly #purges: LocalPurge[] = [];
  readonly #print: (line: string) => void;
  readonly #idPrefix: string;

  /**
   * `print` gets one line per purge (@default console.log). `idPrefix` names this CDN's ids, so
   * a second process (the ops CLI) never prints an id `npm start` also gave. @default 'local'
   */
  constructor(options: { print?: (line: string) => void; idPrefix?: string } = {}) {
    this.#print = options.print ?? ((line) => console.log(line));
    this.#idPrefix = options.idPrefix ?? 'local';
  }

  /** Every purge so far, oldest first. */
  get purges(): readonly LocalPurge[] {
    return this.#purges;
  }

  invalidateTags(tags: readonly string[], options: CdnPurgeOptions = {}): Promise<CdnPurge> {
    try {
      const items = purgeTagsOf(tags).map((tag) => `${CDN_TAG_ITEM_PREFIX}${tag}`);
      const invalidationId = `${this.#idPrefix}-${this.#purges.length + 1}`;
      this.#purges.push({ invalidationId, items, effectId: options.effectId });
      this.#print(`cdn purge ${invalidationId}: ${items.join(', ')}`);
      return Promise.resolve({ status: 'submitted', invalidationIds: [invalidationId] });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
