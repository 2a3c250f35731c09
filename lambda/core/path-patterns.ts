/**
 * Path patterns, two kinds:
 * - which paths may be rendered at all, as glob patterns over the canonical (percent-encoded)
 *   path: `*` matches within one segment, `**` across segments, anything else literally.
 *   `/blog/*` allows `/blog/a` but not `/blog/a/b`; `/docs/**` allows everything under `/docs/`;
 *   `/` allows the home page alone;
 * - CloudFront's own (`matchesPathPattern`), which traffic and key rules use; embedded in the
 *   CloudFront Function, so written in the subset `traffic-rules.ts` describes.
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

/**
 * Whether `path` matches `pattern`, where `**` stands for any characters and everything else
 * is literal: exactly what CloudFront's `*` does in a behaviour's path pattern, so the behaviour
 * and the function agree. Embedded in the CloudFront Function.
 */
export function matchesPathPattern(pattern: string, path: string): boolean {
  const parts = pattern.split('**');
  if (parts.length === 1) return pattern === path;
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (path.length < first.length + last.length) return false;
  if (path.indexOf(first) !== 0) return false;
  if (path.substring(path.length - last.length) !== last) return false;
  let at = first.length;
  const end = path.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i];
    const found = path.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}
