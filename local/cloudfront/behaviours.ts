/**
 * Which cache behaviour a request gets, as CloudFront picks it ("Cache behavior settings",
 * Path pattern,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/DownloadDistValuesCacheBehavior.html#DownloadDistValuesPathPattern):
 * the behaviours in their order, the default one last; the first whose pattern matches wins.
 * A pattern is case-sensitive, `*` matches zero or more characters (`/` included), `?` exactly
 * one, and a leading `/` is optional. The path matched is the normalised one (RFC 3986; see
 * `lambda/core/edge-path.ts`), not the raw path the origin gets.
 */
import { normalisedPathOf } from '../../lambda/core/edge-path.js';
import type { EdgeBehaviour } from './config.js';

const patterns = new Map<string, RegExp>();

/** Whether a behaviour's path pattern matches a (normalised) path. */
export function matchesBehaviourPattern(pattern: string, path: string): boolean {
  let expression = patterns.get(pattern);
  if (expression === undefined) {
    const anchored = pattern.startsWith('/') ? pattern : `/${pattern}`;
    const body = [...anchored]
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('');
    expression = new RegExp(`^${body}$`, 's');
    patterns.set(pattern, expression);
  }
  return expression.test(path);
}

/** The behaviour CloudFront applies to a request for `rawPath`. */
export function behaviourFor(behaviours: readonly EdgeBehaviour[], rawPath: string): EdgeBehaviour {
  const path = normalisedPathOf(rawPath);
  const found = behaviours.find(
    (behaviour) =>
      behaviour.pathPattern === '*' || matchesBehaviourPattern(behaviour.pathPattern, path),
  );
  if (found === undefined) throw new Error('the distribution has no default behaviour');
  return found;
}
