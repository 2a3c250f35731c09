/**
 * The BodyListing port's contract: bodies under the prefix only, in key order, a bounded page at
 * a time, resumable from the cursor each page gives.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BucketSubject } from '../../../helpers/contract-subjects.js';

/** The prefix the subjects list under (the body prefix of a deployment). */
export const LISTED_PREFIX = 'pages/';

export function bodyListingContract(name: string, make: () => Promise<BucketSubject>): void {
  describe(`BodyListing contract (${name})`, () => {
    let s: BucketSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    it('lists every body under the prefix once, in key order, a page at a time', async () => {
      const keys = ['pages/_/b/2', 'pages/_/a/1', 'pages/acme/c/3', 'pages/_/a/0', 'pages/_/b/1'];
      for (const key of [...keys, 'other/x', 'pagesnot/y']) await s.write(key);
      const listed: string[] = [];
      const pageSizes: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.listing.list({ cursor, limit: 2 });
        listed.push(...page.bodies.map((body) => body.s3Key));
        pageSizes.push(page.bodies.length);
        expect(page.bodies.every((body) => Number.isInteger(body.writtenAt))).toBe(true);
        cursor = page.next;
      } while (cursor !== undefined);
      expect(listed).toEqual([...keys].sort());
      expect(pageSizes).toEqual([2, 2, 1]);
    });
  });
}
