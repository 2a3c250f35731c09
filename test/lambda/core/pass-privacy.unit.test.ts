import { describe, expect, it } from '@jest/globals';
import { privateCacheControl } from '../../../lambda/core/pass-privacy.js';

describe('privateCacheControl', () => {
  it('makes an answer private for shared caches, keeping what the browser reads', () => {
    expect(privateCacheControl('public, max-age=60, s-maxage=300, stale-while-revalidate=5')).toBe(
      'private, max-age=60, stale-while-revalidate=5',
    );
    expect(privateCacheControl('no-store')).toBe('private, no-store');
    expect(privateCacheControl(undefined)).toBe('private');
    expect(privateCacheControl('private, no-cache="set-cookie, x-a"')).toBe(
      'private, no-cache="set-cookie, x-a"',
    );
  });

  it('states no lifetime on an error, which CloudFront would keep whatever else it says', () => {
    expect(privateCacheControl('public, max-age=60, must-revalidate', 403)).toBe(
      'private, must-revalidate',
    );
  });
});
