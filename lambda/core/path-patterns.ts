/**
 * Which paths may be rendered at all, as glob patterns over the canonical (percent-encoded)
 * path: `*` matches within one segment, `**` across segments, anything else literally.
 * `/blog/*` allows `/blog/a` but not `/blog/a/b`; `/docs/**` allows everything under `/docs/`;
 * `/` allows the home page alone.
 */
export type PathMatcher = (path: string) => boolean;

const PATTERN = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/** @throws Error naming a pattern that is not a path glob */
export function compilePathPatterns(patterns: readonly string[]): PathMatcher {
  const expressions = patterns.map((pattern) => {
    if (!PATTERN.test(pattern)) {
      throw new Error(
        `render path pattern ${JSON.stringify(pattern)} must be a path starting with "/"`,
      );
    }
    const source = pattern
      .split(/(\*\*|\*)/)
      .map((part) =>
        part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('');
    return new RegExp(`^${source}$`);
  });
  return (path) => expressions.some((expression) => expression.test(path));
}
