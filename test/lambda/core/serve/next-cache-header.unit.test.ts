/**
 * Issue 34, point 5: with `nextCacheHeader` (the `nextjs` preset) a page's answer says its state
 * in `x-nextjs-cache` too, as Next's own answers do, for tools that read it; off, it does not
 * (the negative control). The upstream's own `x-nextjs-cache` is never replayed.
 */
import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { NEXTJS_PRESET } from '../../../../lambda/core/settings/presets.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import { memoryService } from '../../../helpers/memory-service.js';

async function answersWith(nextCacheHeader: boolean | undefined) {
  const { renderer } = countingRenderer(() => ({
    ...htmlPage('<p>page</p>', { revalidateSeconds: 10 }),
    headers: { 'x-nextjs-cache': 'MISS', 'x-fixture-config': 'headers()' },
  }));
  const service = memoryService({ renderer });
  const deps = {
    ...service.originDeps,
    caching: { ...service.originDeps.caching, nextCacheHeader },
  };
  const get = () =>
    servePage(deps, {
      method: 'GET',
      rawPath: '/p',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    });
  const miss = await get();
  const hit = await get();
  service.clock.advance(11);
  const stale = await get();
  return [miss, hit, stale].map((answer) => answer.headers);
}

describe('x-nextjs-cache', () => {
  it('says MISS, HIT and STALE with the nextjs preset', async () => {
    expect(NEXTJS_PRESET.nextCacheHeader).toBe(true);
    const headers = await answersWith(true);
    expect(headers.map((h) => h['x-nextjs-cache'])).toEqual(['MISS', 'HIT', 'STALE']);
    expect(headers[1]?.['x-fixture-config']).toBe('headers()');
  });

  it('negative control: off by default, and the upstream’s own is not replayed', async () => {
    const headers = await answersWith(undefined);
    expect(headers.map((h) => h['x-nextjs-cache'])).toEqual([undefined, undefined, undefined]);
  });
});
