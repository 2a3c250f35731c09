import type { CdnInvalidator, CdnPurge } from '../lambda/core/ports.js';

/**
 * `npm start`'s CDN: there is none, so each purge is printed as the invalidation CloudFront
 * would get (`#tag` items), one line per purge, and answered with a local id.
 */
export class PrintingCdnInvalidator implements CdnInvalidator {
  #count = 0;

  constructor(readonly print: (line: string) => void = (line) => console.log(line)) {}

  invalidateTags(tags: readonly string[]): Promise<CdnPurge> {
    this.#count += 1;
    const id = `local-${this.#count}`;
    this.print(`cdn purge ${id}: ${tags.map((tag) => `#${tag}`).join(' ')}`);
    return Promise.resolve({ status: 'submitted', invalidationIds: [id] });
  }
}
