/**
 * Found by the model check (a viewer racing a fan-out's last step): the origin read META and the
 * in-progress rows in parallel. When META was read before a fan-out marked the page and the
 * rows after that fan-out ended (removing its entries), a request begun after the 202 was
 * answered HIT with the page from before it. The rows are now read (or reused) first.
 */
import { describe, expect, it } from '@jest/globals';
import type { CacheTable, RevalidationsInProgress } from '../../../../lambda/core/page/ports.js';
import { acceptRevalidation } from '../../../../lambda/core/revalidate/fan-out.js';
import { InProgressReader } from '../../../../lambda/core/page/in-progress.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { backgroundService } from '../../../helpers/fan-out.js';

describe('a request racing the end of a fan-out', () => {
  it('never pairs META from before the mark with rows from after the end', async () => {
    const ctx = backgroundService();
    await ctx.get('/blog/a');
    await acceptRevalidation(ctx.deps, ctx.revalidation());
    ctx.clock.advance(1); // the 202 is past; the request begins now
    // The fan-out runs, start to end, right after this request's META read.
    let metaRead: Promise<unknown> | undefined;
    const cacheTable: CacheTable = Object.assign(Object.create(ctx.cacheTable) as CacheTable, {
      readPage: (pk: string) => {
        metaRead = ctx.cacheTable.readPage(pk).then(async (page) => {
          await ctx.drain();
          return page;
        });
        return metaRead;
      },
    });
    // ... and the rows' read lands after whatever META read went first.
    const rows: RevalidationsInProgress = {
      begin: (...args) => ctx.inProgress.begin(...args),
      end: (...args) => ctx.inProgress.end(...args),
      read: async (tenant, shard) => {
        await Promise.resolve();
        await metaRead;
        return ctx.inProgress.read(tenant, shard);
      },
    };
    const reader = new InProgressReader({ rows, shards: 4, cacheMs: 250 }, ctx.clock);
    const answer = await servePage(
      { ...ctx.originDeps, cacheTable, inProgress: reader },
      {
        method: 'GET',
        rawPath: '/blog/a',
        rawQueryString: '',
        tenant: undefined,
        ifNoneMatch: undefined,
      },
    );
    expect(ctx.state.fanOuts.size).toBe(0); // the fan-out did end during the request
    expect(answer.cacheStatus).toBe('STALE');
  });

  it('a failed read of the rows is a 503, never a HIT without them, and is not kept', async () => {
    const ctx = backgroundService();
    await ctx.get('/blog/a');
    await acceptRevalidation(ctx.deps, ctx.revalidation());
    ctx.clock.advance(1);
    let failing = true;
    const rows: RevalidationsInProgress = {
      begin: (...args) => ctx.inProgress.begin(...args),
      end: (...args) => ctx.inProgress.end(...args),
      read: (tenant, shard) =>
        failing
          ? Promise.reject(new Error('ProvisionedThroughputExceededException (injected)'))
          : ctx.inProgress.read(tenant, shard),
    };
    const reader = new InProgressReader({ rows, shards: 4, cacheMs: 250 }, ctx.clock);
    const request = {
      method: 'GET',
      rawPath: '/blog/a',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    } as const;
    const deps = { ...ctx.originDeps, inProgress: reader };
    const failed = await servePage(deps, request);
    expect(failed).toMatchObject({ status: 503, decision: 'unavailable' });
    expect(failed.headers['cache-control']).toBe('no-store');
    // Not kept: the next request reads again, and honours the entry.
    failing = false;
    expect((await servePage(deps, request)).cacheStatus).toBe('STALE');
  });
});
