import { describe, expect, it } from '@jest/globals';
import {
  chunksOf,
  purgeDelayMs,
  purgeIdOf,
  purgeTagsOf,
  DEFAULT_PURGE_BACKOFF,
} from '../../../lambda/core/cdn-purge.js';
import { CdnPurgeRejectedError } from '../../../lambda/core/errors.js';

describe('purge items and identity', () => {
  it('lower-cases, strips a leading #, deduplicates and sorts the tags', () => {
    expect(purgeTagsOf(['b/X', '#a/y', 'B/x'])).toEqual(['a/y', 'b/x']);
  });

  it('refuses what CloudFront refuses: commas, spaces, non-ASCII, over 256 characters', () => {
    for (const tag of ['a,b', 'a b', 'é', '', 'x'.repeat(257)]) {
      expect(() => purgeTagsOf([tag])).toThrow(CdnPurgeRejectedError);
    }
    expect(purgeTagsOf(['x'.repeat(256)])).toHaveLength(1);
  });

  it('derives the same id from the same tags and effects, in any order', () => {
    const id = purgeIdOf(['a', 'b'], { effectIds: ['e1', 'e2'] });
    expect(purgeIdOf(['b', 'a'], { effectIds: ['e2', 'e1', 'e1'] })).toBe(id);
    expect(purgeIdOf(['a', 'b'], { effectIds: ['e1'] })).not.toBe(id);
    expect(purgeIdOf(['a', 'b'], { nonce: 'n' })).not.toBe(purgeIdOf(['a', 'b'], { nonce: 'm' }));
  });

  it('slices items into parts of at most the given size', () => {
    expect(chunksOf([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('doubles the wait per retry up to its cap, jittered between half and all of it', () => {
    const policy = DEFAULT_PURGE_BACKOFF;
    expect(purgeDelayMs(1, policy, () => 0)).toBe(policy.baseDelayMs / 2);
    expect(purgeDelayMs(2, policy, () => 0.999999)).toBe(policy.baseDelayMs * 2);
    expect(purgeDelayMs(20, policy, () => 0.999999)).toBe(policy.maxDelayMs);
  });
});
