/**
 * The PageHistory port's contract (VersionRows included): a page's versions newest first, an
 * operator's restore under the conditions it states, a hold that writes only itself, and a hold
 * lifted once.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  LeaseLostError,
  PageChangedError,
  VersionRequestError,
} from '../../../../lambda/core/errors.js';
import type { CacheMeta } from '../../../../lambda/core/page/model.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const T = 1_800_000_000;

export function pageHistoryContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`PageHistory contract (${name})`, () => {
    let s: TableSubject;
    let pages = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    const skOf = (at: number) => `VER#${at}-contract`;
    const generation = (pk: string, at: number): CacheMeta => ({
      pk,
      s3Key: `pages/_/contract/${at}`,
      generatedAt: at,
      revalidateSeconds: 60,
      statusCode: 200,
      contentType: 'text/html',
    });
    /** A page published at each of `times`, every version kept; returns its pk and META. */
    async function publishedAt(...times: number[]) {
      const pk = `CACHE#contract-history-${++pages}`;
      const kept: string[] = [];
      for (const at of times) {
        kept.unshift(skOf(at));
        const lease = await s.cacheTable.acquireLease({ pk, now: at, durationSeconds: 30 });
        const meta = { ...generation(pk, at), currentSk: skOf(at), versionSks: [...kept] };
        await s.cacheTable.publishGeneration({ observed: undefined, lease, meta, now: at });
      }
      const meta = await s.cacheTable.getMeta(pk, { consistent: true });
      if (meta === undefined) throw new Error('not published');
      return { pk, meta };
    }
    const seize = (pk: string, now = T + 10) =>
      s.cacheTable.acquireLease({ pk, now, durationSeconds: 30, owner: 'ops', seize: true });
    const restored = (meta: CacheMeta, sk: string, at: number): CacheMeta => ({
      ...generation(meta.pk, at),
      generatedAt: T + 10,
      currentSk: sk,
      versionSks: meta.versionSks,
    });

    it('lists every version newest first, and reads one by its sort key', async () => {
      const { pk } = await publishedAt(T, T + 1, T + 2);
      const versions = await s.history.versions(pk);
      expect(versions.map((version) => version.sk)).toEqual([skOf(T + 2), skOf(T + 1), skOf(T)]);
      expect(await s.history.version(pk, skOf(T + 1))).toMatchObject({
        ...generation(pk, T + 1),
        sk: skOf(T + 1),
      });
      expect(await s.history.version(pk, 'VER#missing')).toBeUndefined();
    });

    it('forgets version rows, answering the bodies they named', async () => {
      const { pk } = await publishedAt(T, T + 1);
      const bodies = await s.history.forget(pk, [skOf(T), 'VER#missing']);
      expect(bodies).toEqual([generation(pk, T).s3Key]);
      expect((await s.history.versions(pk)).map((version) => version.sk)).toEqual([skOf(T + 1)]);
    });

    it('restores a kept version under the operator’s lease, and frees LOCK', async () => {
      const { pk, meta } = await publishedAt(T, T + 1);
      const lease = await seize(pk);
      const next = restored(meta, skOf(T), T);
      await s.history.restore({ lease, meta: next, expected: meta, now: T + 10 });
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toMatchObject(next);
      expect(await s.cacheTable.releaseLease(lease)).toBe(false); // the restore deleted LOCK
    });

    it('refuses a restore when META changed since the operator read it; nothing written', async () => {
      const { pk, meta } = await publishedAt(T, T + 1);
      const lease = await seize(pk);
      const stale = { ...meta, generatedAt: T };
      await expect(
        s.history.restore({
          lease,
          meta: restored(meta, skOf(T), T),
          expected: stale,
          now: T + 10,
        }),
      ).rejects.toBeInstanceOf(PageChangedError);
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toMatchObject(meta);
    });

    it('refuses a restore whose lease was lost, or whose version row is gone', async () => {
      const { pk, meta } = await publishedAt(T, T + 1);
      const lost = await seize(pk);
      await seize(pk, T + 11);
      const next = restored(meta, skOf(T), T);
      await expect(
        s.history.restore({ lease: lost, meta: next, expected: meta, now: T + 11 }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      const lease = await seize(pk, T + 12);
      await s.history.forget(pk, [skOf(T)]);
      const gone = await s.history
        .restore({ lease, meta: next, expected: meta, now: T + 12 })
        .catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(VersionRequestError);
      expect((gone as VersionRequestError).code).toBe('version-not-kept');
    });

    it('lifts a hold once, and says whether there was one', async () => {
      const { pk, meta } = await publishedAt(T);
      const lease = await seize(pk);
      const held = { ...meta, holdUntil: T + 3_600 };
      await s.history.restore({ lease, meta: held, expected: meta, now: T + 10 });
      expect(await s.history.release(pk)).toBe(true);
      expect((await s.cacheTable.getMeta(pk, { consistent: true }))?.holdUntil).toBeUndefined();
      expect(await s.history.release(pk)).toBe(false);
    });
    it('holds the page as it is: only hold_until and ttl change, a revalidation mark stays', async () => {
      const { pk, meta } = await publishedAt(T);
      await s.marks.markStale(pk, { effectId: 'rv_contract', now: T + 5 });
      const lease = await seize(pk);
      const write = { lease, holdUntil: T + 3_600, ttl: T + 90_000, now: T + 10 };
      await s.history.hold({ ...write, expectedGeneratedAt: meta.generatedAt });
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toMatchObject({
        ...meta,
        revalidateSeconds: 0,
        revalidatedAt: T + 5,
        revalidatedBy: 'rv_contract',
        holdUntil: T + 3_600,
        ttl: T + 90_000,
      });
      expect(await s.cacheTable.releaseLease(lease)).toBe(false); // the hold deleted LOCK
    });

    it('refuses a hold on another generation, or under a lost lease; nothing written', async () => {
      const { pk, meta } = await publishedAt(T, T + 1);
      const lease = await seize(pk);
      const write = { lease, holdUntil: T + 3_600, ttl: T + 90_000, now: T + 10 };
      await expect(s.history.hold({ ...write, expectedGeneratedAt: T })).rejects.toBeInstanceOf(
        PageChangedError,
      );
      await seize(pk, T + 11);
      await expect(
        s.history.hold({ ...write, now: T + 11, expectedGeneratedAt: meta.generatedAt }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toMatchObject(meta);
    });
  });
}
