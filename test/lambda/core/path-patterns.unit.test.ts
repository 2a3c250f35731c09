import { describe, expect, it } from '@jest/globals';
import { compilePathPatterns } from '../../../lambda/core/path-patterns.js';

describe('render path patterns', () => {
  const allowed = compilePathPatterns(['/', '/blog/*', '/docs/**', '/caf%C3%A9']);

  it.each([
    ['/', true],
    ['/blog/a', true],
    ['/blog/a/b', false],
    ['/blog', false],
    ['/docs/a/b/c', true],
    ['/docs', false],
    ['/caf%C3%A9', true],
    ['/other', false],
    ['/blogx/a', false],
  ])('%s -> %s', (path, expected) => {
    expect(allowed(path)).toBe(expected);
  });

  it('treats regular expression characters literally', () => {
    const matcher = compilePathPatterns(['/a.b']);
    expect(matcher('/a.b')).toBe(true);
    expect(matcher('/axb')).toBe(false);
  });

  it('refuses a pattern that is not a path', () => {
    expect(() => compilePathPatterns(['blog/*'])).toThrow(/must be a path/);
    expect(() => compilePathPatterns(['/a b'])).toThrow(/must be a path/);
  });
});
