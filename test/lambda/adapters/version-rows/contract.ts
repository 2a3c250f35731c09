/**
 * The VersionRows port's contract (the publisher's side of the history): the VER# rows a publish
 * dropped go, answering the bodies they named, once.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const T = 1_800_000_000;

export function versionRowsContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`VersionRows contract (${name})`, () => {
    let s: TableSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    const skOf = (at: number) => `VER#${at}-contract`;
    const s3KeyOf = (at: number) => `pages/_/contract-versions/${at}`;

    it('deletes the rows named, answers their bodies, and a second forget answers none', async () => {
      const pk = 'CACHE#contract-version-rows';
      const kept: string[] = [];
      for (const at of [T, T + 1]) {
        kept.unshift(skOf(at));
        const lease = await s.cacheTable.acquireLease({ pk, now: at, durationSeconds: 30 });
        const meta = {
          pk,
          s3Key: s3KeyOf(at),
          generatedAt: at,
          revalidateSeconds: 60,
          statusCode: 200,
          contentType: 'text/html',
          currentSk: skOf(at),
          versionSks: [...kept],
        };
        await s.cacheTable.publishGeneration({ observed: undefined, lease, meta, now: at });
      }
      expect(await s.versionRows.forget(pk, [skOf(T), 'VER#missing'])).toEqual([s3KeyOf(T)]);
      expect(await s.versionRows.forget(pk, [skOf(T)])).toEqual([]);
      expect((await s.history.versions(pk)).map((version) => version.sk)).toEqual([skOf(T + 1)]);
    });
  });
}
