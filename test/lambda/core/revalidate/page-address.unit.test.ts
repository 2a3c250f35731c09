import { describe, expect, it } from '@jest/globals';
import { InvalidCacheKeyError } from '../../../../lambda/core/errors.js';
import { parsePageAddress } from '../../../../lambda/core/revalidate/page-address.js';

describe('parsePageAddress (issue 19, item 18)', () => {
  it.each([
    ['/a', '/a', ''],
    ['/a?page=2', '/a', 'page=2'],
    ['/a#top', '/a', ''],
    ['/a?page=2#top', '/a', 'page=2'],
    ['/a#top?page=2', '/a', ''],
    ['/', '/', ''],
    ['https://example.com/a?page=2#top', '/a', 'page=2'],
    ['HTTP://example.com:8080/a', '/a', ''],
    ['https://example.com', '/', ''],
    ['https://example.com?page=2', '/', 'page=2'],
    ['https://example.com#top', '/', ''],
    ['https://user@example.com/a', '/a', ''],
    ['/a%23b', '/a%23b', ''],
  ])('reads %s as path %s and query "%s"', (address, rawPath, rawQueryString) => {
    expect(parsePageAddress(address)).toEqual({ rawPath, rawQueryString });
  });

  it.each(['', 'a', 'a#b', '#a', '?a=1', 'example.com/a', 'ftp://example.com/a', 'mailto:a@b'])(
    'refuses "%s", saying what an address is',
    (address) => {
      expect(() => parsePageAddress(address)).toThrow(InvalidCacheKeyError);
      expect(() => parsePageAddress(address)).toThrow(
        `"${address}" is neither a path starting with "/" nor an http(s) URL`,
      );
    },
  );
});
