/**
 * Behaviour selection as CloudFront documents it ("Cache behavior settings", Path pattern,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/DownloadDistValuesCacheBehavior.html#DownloadDistValuesPathPattern).
 */
import { describe, expect, it } from '@jest/globals';
import { normalisedPathOf } from '../../../lambda/core/edge-path.js';
import { behaviourFor, matchesBehaviourPattern } from '../../../local/cloudfront/behaviours.js';
import type { EdgeBehaviour } from '../../../local/cloudfront/config.js';

const behaviour = (pathPattern: string): EdgeBehaviour =>
  ({ pathPattern, originId: pathPattern }) as EdgeBehaviour;

describe('matchesBehaviourPattern', () => {
  it('"*" matches any characters, "/" included; "?" exactly one', () => {
    expect(matchesBehaviourPattern('/api/*', '/api/a/b')).toBe(true);
    expect(matchesBehaviourPattern('*.jpg', '/images/a/b.jpg')).toBe(true);
    expect(matchesBehaviourPattern('/a?c', '/abc')).toBe(true);
    expect(matchesBehaviourPattern('/a?c', '/ac')).toBe(false);
  });

  it('is case-sensitive, and the leading "/" is optional', () => {
    expect(matchesBehaviourPattern('/api/*', '/API/x')).toBe(false);
    expect(matchesBehaviourPattern('api/*', '/api/x')).toBe(true);
  });

  it('takes every other character literally', () => {
    expect(matchesBehaviourPattern('/a.b', '/aXb')).toBe(false);
    expect(matchesBehaviourPattern('/a+(b)', '/a+(b)')).toBe(true);
  });
});

describe('behaviourFor', () => {
  const behaviours = [behaviour('/api/*'), behaviour('/api/public/*'), behaviour('*')];

  it('takes the first behaviour that matches, in their order, the default last', () => {
    expect(behaviourFor(behaviours, '/api/public/x').pathPattern).toBe('/api/*');
    expect(behaviourFor(behaviours, '/page').pathPattern).toBe('*');
  });

  it('matches the path as CloudFront normalises it (RFC 3986), not the raw one', () => {
    expect(behaviourFor(behaviours, '/%61pi/me').pathPattern).toBe('/api/*');
    expect(behaviourFor(behaviours, '//api/me').pathPattern).toBe('/api/*');
    expect(behaviourFor(behaviours, '/x/../api/me').pathPattern).toBe('/api/*');
    // An encoded reserved character stays encoded: %2F is not a "/".
    expect(behaviourFor(behaviours, '/api%2Fme').pathPattern).toBe('*');
  });
});

describe('normalisedPathOf', () => {
  it('decodes percent-encoded unreserved characters and upper-cases other escapes', () => {
    expect(normalisedPathOf('/%61%7E%2d/caf%c3%a9')).toBe('/a~-/caf%C3%A9');
  });

  it('removes dot segments and repeated slashes, keeping a trailing slash', () => {
    expect(normalisedPathOf('/a/./b/../c/')).toBe('/a/c/');
    expect(normalisedPathOf('/a//b///c')).toBe('/a/b/c');
    expect(normalisedPathOf('/../a')).toBe('/a');
    expect(normalisedPathOf('/a/..')).toBe('/');
    expect(normalisedPathOf('/')).toBe('/');
  });

  it('leaves a malformed escape as it is', () => {
    expect(normalisedPathOf('/a%zz/%4')).toBe('/a%zz/%4');
  });
});
