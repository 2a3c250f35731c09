/**
 * The CacheTable port's contract: what every implementation does, the in-memory one (unit tier)
 * and DynamoDB's (integration tier) alike. The lease, the publish and its refusals, the failure
 * record. Run by test/lambda/adapters/contract.*.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  LeaseHeldError,
  LeaseLostError,
  NewerGenerationError,
  RequestAlreadyCompletedError,
  RevalidatedDuringRenderError,
} from '../../../../lambda/core/errors.js';
import { createIdempotencyConfig } from '../../../../lambda/core/idempotency.js';
import type { CacheMeta } from '../../../../lambda/core/page/model.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';
import { fixedContext } from '../../../helpers/memory-service.js';

const T = 1_800_000_000;

export function cacheTableContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`CacheTable contract (${name})`, () => {
    let s: TableSubject;
    let pages = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    const freshPk = () => `CACHE#contract-table-${++pages}`;
    const take = (pk: string, now = T, owner = 'a') =>
      s.cacheTable.acquireLease({ pk, now, durationSeconds: 30, owner });
    const generation = (pk: string, generatedAt: number, extra: Partial<CacheMeta> = {}) => ({
      pk,
      s3Key: `pages/_/contract/${generatedAt}`,
      generatedAt,
      revalidateSeconds: 60,
      etag: `"e${generatedAt}"`,
      contentType: 'text/html',
      statusCode: 200,
      ...extra,
    });
    const heldBy = async (pk: string, now: number) =>
      take(pk, now, 'probe').then(
        () => 'free',
        (error: unknown) => (error instanceof LeaseHeldError ? 'held' : 'error'),
      );

    it('reads no META for a page never published', async () => {
      expect(await s.cacheTable.getMeta(freshPk(), { consistent: true })).toBeUndefined();
    });

    it('takes a free lease, refuses a live one naming its holder, hands over an expired one', async () => {
      const pk = freshPk();
      const first = await take(pk);
      expect(first).toMatchObject({ pk, expiresAt: T + 30, owner: 'a' });
      expect(first.takenOver).toBeUndefined();
      const refused = await take(pk, T + 29, 'b').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(LeaseHeldError);
      expect((refused as LeaseHeldError).holder).toEqual({
        token: first.token,
        expiresAt: T + 30,
        owner: 'a',
      });
      const next = await take(pk, T + 30, 'b');
      expect(next.token).not.toBe(first.token);
      expect(next.takenOver).toEqual({ token: first.token, expiresAt: T + 30, owner: 'a' });
    });

    it('seizes a live lease for an operator; the holder can no longer release it', async () => {
      const pk = freshPk();
      const first = await take(pk);
      const seized = await s.cacheTable.acquireLease({
        pk,
        now: T + 1,
        durationSeconds: 30,
        owner: 'ops',
        seize: true,
      });
      expect(seized.takenOver).toMatchObject({ token: first.token, owner: 'a' });
      expect(await s.cacheTable.releaseLease(first)).toBe(false);
      expect(await s.cacheTable.releaseLease(seized)).toBe(true);
      expect(await heldBy(pk, T + 1)).toBe('free');
    });

    it('refreshes only while its token is on LOCK, even past its own expiry', async () => {
      const pk = freshPk();
      const first = await take(pk);
      const refreshed = await s.cacheTable.refreshLease(first, {
        now: T + 40,
        durationSeconds: 30,
      });
      expect(refreshed).toMatchObject({ token: first.token, expiresAt: T + 70 });
      expect(await heldBy(pk, T + 69)).toBe('held');
      await take(pk, T + 70, 'b');
      await expect(
        s.cacheTable.refreshLease(refreshed, { now: T + 71, durationSeconds: 30 }),
      ).rejects.toBeInstanceOf(LeaseLostError);
    });

    it('releases a lease once, and only with its token', async () => {
      const pk = freshPk();
      const first = await take(pk);
      expect(await s.cacheTable.releaseLease({ ...first, token: 'not-mine' })).toBe(false);
      expect(await heldBy(pk, T)).toBe('held');
      expect(await s.cacheTable.releaseLease(first)).toBe(true);
      expect(await s.cacheTable.releaseLease(first)).toBe(false);
    });

    it('publishes META and frees LOCK in one step, under a live lease', async () => {
      const pk = freshPk();
      const lease = await take(pk);
      const meta = generation(pk, T + 1, { tags: ['a', 'b'], headers: { 'x-a': '1' } });
      await s.cacheTable.publishGeneration({ observed: undefined, lease, meta, now: T + 1 });
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toMatchObject(meta);
      expect(await heldBy(pk, T + 1)).toBe('free');
    });

    it('refuses the publish of a lease that ran out or was taken over; nothing is written', async () => {
      const pk = freshPk();
      const lease = await take(pk);
      await expect(
        s.cacheTable.publishGeneration({
          observed: undefined,
          lease,
          meta: generation(pk, T),
          now: T + 30,
        }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      await take(pk, T + 30, 'b');
      await expect(
        s.cacheTable.publishGeneration({
          observed: undefined,
          lease,
          meta: generation(pk, T),
          now: T + 20,
        }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toBeUndefined();
    });

    it('never publishes over a newer generation', async () => {
      const pk = freshPk();
      await s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk),
        meta: generation(pk, T + 10),
        now: T,
      });
      const late = await take(pk, T + 1);
      const refused = await s.cacheTable
        .publishGeneration({
          observed: undefined,
          lease: late,
          meta: generation(pk, T + 5),
          now: T + 1,
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(NewerGenerationError);
      expect((refused as NewerGenerationError).currentGeneratedAt).toBe(T + 10);
      expect((await s.cacheTable.getMeta(pk, { consistent: true }))?.generatedAt).toBe(T + 10);
    });

    const passMark = (pk: string, now: number) => ({
      pk,
      until: now + 300,
      reason: 'uncacheable',
      markedAt: now,
      cacheKey: '/contract',
      ttl: now + 3_900,
    });

    it('marks a key as pass under the lease: META#PASS written, META and LOCK deleted at once', async () => {
      const pk = freshPk();
      await s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk),
        meta: generation(pk, T),
        now: T,
      });
      const lease = await take(pk, T + 1);
      await s.cacheTable.markPass({ lease, mark: passMark(pk, T + 1), now: T + 1 });
      expect(await s.cacheTable.readPage(pk)).toEqual({
        meta: undefined,
        pass: passMark(pk, T + 1),
      });
      // A FaceTheory reader (GetItem of META) never sees the mark.
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toBeUndefined();
      expect(await heldBy(pk, T + 1)).toBe('free');
    });

    it('reads META and the mark in one call, and a later publish beside the mark', async () => {
      const pk = freshPk();
      await s.cacheTable.markPass({ lease: await take(pk), mark: passMark(pk, T), now: T });
      const meta = generation(pk, T + 5);
      await s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk, T + 5),
        meta,
        now: T + 5,
      });
      const page = await s.cacheTable.readPage(pk);
      expect(page.meta).toMatchObject(meta);
      expect(page.pass).toMatchObject({ until: T + 300 });
    });

    it('refuses the mark of a lost, expired or revalidation-marked lease; nothing is written', async () => {
      const marked = freshPk();
      const held = await take(marked);
      expect(await s.marks.markLock(marked, 'rv_contract_pass')).toBe(true);
      await expect(
        s.cacheTable.markPass({ lease: held, mark: passMark(marked, T), now: T + 1 }),
      ).rejects.toBeInstanceOf(RevalidatedDuringRenderError);
      expect((await s.cacheTable.readPage(marked)).pass).toBeUndefined();
      const pk = freshPk();
      const lease = await take(pk);
      await expect(
        s.cacheTable.markPass({ lease, mark: passMark(pk, T), now: T + 30 }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      await take(pk, T + 30, 'b');
      await expect(
        s.cacheTable.markPass({ lease, mark: passMark(pk, T), now: T + 31 }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect((await s.cacheTable.readPage(pk)).pass).toBeUndefined();
    });

    it('refuses a publish after a revalidation marked LOCK, until its holder lifts the mark', async () => {
      const pk = freshPk();
      const lease = await take(pk);
      expect(await s.marks.markLock(pk, 'rv_contract')).toBe(true);
      const publish = () =>
        s.cacheTable.publishGeneration({
          observed: undefined,
          lease,
          meta: generation(pk, T),
          now: T + 1,
        });
      await expect(publish()).rejects.toBeInstanceOf(RevalidatedDuringRenderError);
      expect(await s.cacheTable.clearRevalidationMark({ ...lease, token: 'not-mine' })).toBe(false);
      expect(await s.cacheTable.clearRevalidationMark(lease)).toBe(true);
      await publish();
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toBeDefined();
    });

    it('refuses a publish once a revalidation marked or expired the META its render read', async () => {
      const pk = freshPk();
      const publishOver = async (at: number) => {
        const lease = await take(pk, at);
        const observed = await s.cacheTable.getMeta(pk, { consistent: true });
        return {
          observed,
          publish: () =>
            s.cacheTable.publishGeneration({ observed, lease, meta: generation(pk, at), now: at }),
        };
      };
      await (await publishOver(T)).publish();
      // Read unmarked, marked since: refused, and META keeps the mark.
      const first = await publishOver(T + 1);
      await s.marks.markStale(pk, { effectId: 'rv_a', now: T + 1 });
      await expect(first.publish()).rejects.toBeInstanceOf(RevalidatedDuringRenderError);
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toMatchObject({
        generatedAt: T,
        revalidatedBy: 'rv_a',
      });
      await s.cacheTable.releaseLease(await take(pk, T + 60)).catch(() => undefined);
      // Read marked by rv_a, marked again by rv_b since: refused.
      const second = await publishOver(T + 100);
      expect(second.observed?.revalidatedBy).toBe('rv_a');
      await s.marks.markStale(pk, { effectId: 'rv_b', now: T + 100 });
      await expect(second.publish()).rejects.toBeInstanceOf(RevalidatedDuringRenderError);
      await s.cacheTable.releaseLease(await take(pk, T + 200)).catch(() => undefined);
      // Read marked by rv_b, nothing since: published, and the new META carries no mark.
      const third = await publishOver(T + 300);
      await third.publish();
      expect((await s.cacheTable.getMeta(pk, { consistent: true }))?.revalidatedBy).toBeUndefined();
      // Read present, expired since: refused, nothing written.
      const fourth = await publishOver(T + 400);
      await s.marks.expire(pk);
      await expect(fourth.publish()).rejects.toBeInstanceOf(RevalidatedDuringRenderError);
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toBeUndefined();
    });

    it('writes the generation’s version row in the publish, once', async () => {
      const pk = freshPk();
      const sk = 'VER#1800000001-contract';
      const meta = generation(pk, T + 1, { currentSk: sk, versionSks: [sk] });
      await s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk),
        meta,
        now: T + 1,
      });
      const version = await s.history.version(pk, sk);
      expect(version).toMatchObject({ ...generation(pk, T + 1), sk });
      expect(version?.versionSks).toBeUndefined();
      const again = s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk, T + 2),
        meta,
        now: T + 2,
      });
      await expect(again).rejects.toThrow();
    });

    it('seals the intent’s REQ# claim in the publish, and refuses a second publish for it', async () => {
      const pk = freshPk();
      const config = createIdempotencyConfig(3_600);
      config.registerLambdaContext(fixedContext(30_000));
      s.requests.configure({ config });
      await s.requests.saveInProgress({ pk, key: 'm1', request: { n: 1 } }, 30_000);
      const seal = { idempotencyKey: 'm1', ttl: T + 3_600 };
      const meta = generation(pk, T + 1);
      await s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk),
        meta,
        now: T + 1,
        seal,
      });
      const second = s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk, T + 2),
        meta: generation(pk, T + 2),
        now: T + 2,
        seal,
      });
      await expect(second).rejects.toBeInstanceOf(RequestAlreadyCompletedError);
      expect((await s.cacheTable.getMeta(pk, { consistent: true }))?.generatedAt).toBe(T + 1);
    });

    it('records a failure only on the generation, and the count, the caller read', async () => {
      const pk = freshPk();
      await s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk),
        meta: generation(pk, T),
        now: T,
      });
      const record = { count: 1, lastFailedAt: T + 5, nextAttemptAt: T + 20, error: 'e: down' };
      const input = { pk, observedGeneratedAt: T, previousCount: 0, record };
      expect(await s.cacheTable.recordFailure({ ...input, observedGeneratedAt: T - 1 })).toBe(
        false,
      );
      expect(await s.cacheTable.recordFailure(input)).toBe(true);
      expect((await s.cacheTable.getMeta(pk, { consistent: true }))?.failures).toEqual(record);
      expect(await s.cacheTable.recordFailure(input)).toBe(false); // the count moved on
    });

    it('moves META’s TTL with a failure record that carries one, and keeps it otherwise', async () => {
      const pk = freshPk();
      const meta = { ...generation(pk, T), ttl: T + 100 };
      await s.cacheTable.publishGeneration({
        observed: undefined,
        lease: await take(pk),
        meta,
        now: T,
      });
      const record = { count: 1, lastFailedAt: T + 5, nextAttemptAt: T + 20, error: 'e: down' };
      const input = { pk, observedGeneratedAt: T, previousCount: 0, record };
      await s.cacheTable.recordFailure(input);
      expect((await s.cacheTable.getMeta(pk, { consistent: true }))?.ttl).toBe(T + 100);
      const next = { ...record, count: 2 };
      await s.cacheTable.recordFailure({ ...input, previousCount: 1, record: next, ttl: T + 900 });
      expect((await s.cacheTable.getMeta(pk, { consistent: true }))?.ttl).toBe(T + 900);
    });
  });
}
