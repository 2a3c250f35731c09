import type { BodyReferences, PageReferences } from '../../core/ports.js';

/**
 * A page's references as set; `listedMeanwhile` holds the `pk sk` of unlisted rows a publish
 * lists between the read and the delete, which the guarded delete must leave.
 */
export class InMemoryBodyReferences implements BodyReferences {
  readonly pages = new Map<string, PageReferences>();
  readonly reads: string[] = [];
  readonly listedMeanwhile = new Set<string>();
  readonly forgotten: string[] = [];

  of(pk: string): Promise<PageReferences> {
    this.reads.push(pk);
    return Promise.resolve(
      this.pages.get(pk) ?? { s3Keys: new Set(), unlisted: [], lease: undefined },
    );
  }

  forgetUnlisted(pk: string, sks: readonly string[]): Promise<string[]> {
    const deleted = sks.filter((sk) => !this.listedMeanwhile.has(`${pk} ${sk}`));
    const page = this.pages.get(pk);
    if (page !== undefined) {
      const unlisted = page.unlisted.filter((version) => !deleted.includes(version.sk));
      this.pages.set(pk, { ...page, unlisted });
    }
    this.forgotten.push(...deleted.map((sk) => `${pk} ${sk}`));
    return Promise.resolve(deleted);
  }
}
