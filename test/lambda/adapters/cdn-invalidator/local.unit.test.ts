import { describe, expect, it } from '@jest/globals';
import { LocalCdnInvalidator } from '../../../../lambda/adapters/cdn-invalidator/local.js';
import { CdnPurgeRejectedError } from '../../../../lambda/core/errors.js';

describe('LocalCdnInvalidator', () => {
  it('records and prints each purge as the #items CloudFront would get', async () => {
    const lines: string[] = [];
    const cdn = new LocalCdnInvalidator({ print: (line) => lines.push(line) });

    const first = await cdn.invalidateTags(['_/b', '_/A', '_/b'], { effectId: 'e1' });
    const second = await cdn.invalidateTags(['t1/post:42']);

    expect(first).toEqual({ status: 'submitted', invalidationIds: ['local-1'] });
    expect(second).toEqual({ status: 'submitted', invalidationIds: ['local-2'] });
    expect(lines).toEqual(['cdn purge local-1: #_/a, #_/b', 'cdn purge local-2: #t1/post:42']);
    expect(cdn.purges).toEqual([
      { invalidationId: 'local-1', items: ['#_/a', '#_/b'], effectId: 'e1' },
      { invalidationId: 'local-2', items: ['#t1/post:42'], effectId: undefined },
    ]);
  });

  it('refuses a tag CloudFront would refuse, as the real adapter does', async () => {
    const cdn = new LocalCdnInvalidator({ print: () => undefined });
    await expect(cdn.invalidateTags(['has space'])).rejects.toBeInstanceOf(CdnPurgeRejectedError);
    expect(cdn.purges).toEqual([]);
  });
});
