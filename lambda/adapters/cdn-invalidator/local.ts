/**
 * The CDN of `npm start`: each purge is recorded (for tests and the local tools), made on the
 * local CloudFront when there is one (`edge`), and printed as one line with the `#tag` items
 * CloudFront gets.
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

/** A local CDN cache that takes CloudFront's invalidation items (`#tag`, paths). */
export interface LocalEdgeCache {
  /** Removes what the items name; returns how many objects went. */
  invalidate(items: readonly string[]): number;
}

/** Records, makes on the local CloudFront and prints purges. */
export class LocalCdnInvalidator implements CdnInvalidator {
  readonly #purges: LocalPurge[] = [];
  readonly #print: (line: string) => void;
  readonly #edge: LocalEdgeCache | undefined;
  readonly #idPrefix: string;

  /**
   * `print` gets one line per purge (@default console.log); `edge` makes them. `idPrefix` names
   * this CDN's ids, so a second process (the ops CLI) never prints an id `npm start` also gave.
   * @default 'local'
   */
  constructor(
    options: { print?: (line: string) => void; edge?: LocalEdgeCache; idPrefix?: string } = {},
  ) {
    this.#print = options.print ?? ((line) => console.log(line));
    this.#edge = options.edge;
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
      const removed = this.#edge?.invalidate(items);
      const objects = removed === undefined ? '' : ` (${removed} cached objects removed)`;
      this.#print(`cdn purge ${invalidationId}: ${items.join(', ')}${objects}`);
      return Promise.resolve({ status: 'submitted', invalidationIds: [invalidationId] });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
