/**
 * Issue 22: the variants of one page are bounded (`maxVariantsPerPage`). A request for a new
 * variant of a page that has that many passes to the upstream, stored nowhere; the count is
 * read on a MISS only, never on a HIT.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import type { PassThrough } from '../../../../lambda/core/serve/ports.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';

const keyPolicy = {
  allowedQueryParams: [],
  variants: [{ name: 'x-v', charset: 'a-z', maxLength: 8 }],
};

function setup(maxVariantsPerPage: number | undefined) {
  const counter = countingRenderer(() => htmlPage('<p>v</p>', { revalidateSeconds: 60 }));
  let passes = 0;
  const passThrough: PassThrough = {
    forward: () => {
      passes += 1;
      return Promise.resolve({ status: 200, headers: [], body: [Buffer.from('upstream')] });
    },
  };
  const service = memoryService({ renderer: counter.renderer, keyPolicy, passThrough });
  const deps = { ...service.originDeps, maxVariantsPerPage };
  const counts = jest.spyOn(service.tagIndex, 'countPages');
  const get = (variant: string) =>
    servePage(deps, {
      method: 'GET',
      rawPath: '/p',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
      variantHeaders: { 'x-v': variant },
    });
  return { service, counter, counts, get, passes: () => passes };
}

describe('variants per page are bounded', () => {
  it('a new variant past the bound passes, stored nowhere; a HIT never counts', async () => {
    const { service, counts, get, passes } = setup(2);
    expect((await get('a')).cacheStatus).toBe('MISS');
    expect((await get('b')).cacheStatus).toBe('MISS');
    expect(counts).toHaveBeenCalledTimes(2);
    const stored = service.state.metas.size;
    const third = await get('c');
    expect(third.cacheStatus).toBe('PASS');
    expect(third.headers['cache-status']).toContain('detail=variant-limit');
    expect(passes()).toBe(1);
    expect(service.state.metas.size).toBe(stored);
    counts.mockClear();
    expect((await get('a')).cacheStatus).toBe('HIT');
    expect(counts).not.toHaveBeenCalled();
  });

  it('control: without the bound the third variant is stored', async () => {
    const { service, counts, get } = setup(undefined);
    for (const variant of ['a', 'b', 'c']) expect((await get(variant)).cacheStatus).toBe('MISS');
    expect(service.state.metas.size).toBe(3);
    expect(counts).not.toHaveBeenCalled();
  });

  it('control: the page itself (no variant) is never counted', async () => {
    const { counts, service } = setup(1);
    const page = await servePage(
      { ...service.originDeps, maxVariantsPerPage: 1 },
      {
        method: 'GET',
        rawPath: '/p',
        rawQueryString: '',
        tenant: undefined,
        ifNoneMatch: undefined,
      },
    );
    expect(page.cacheStatus).toBe('MISS');
    expect(counts).not.toHaveBeenCalled();
  });
});
