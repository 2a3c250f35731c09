/**
 * The rule behind every pass-through: an answer made with a viewer's own request (their cookies,
 * their credentials) is never shared, neither by the table (a pass is never stored) nor by a
 * shared cache on the way (CloudFront keys on its cache policy alone and keeps what
 * `s-maxage`/`public` allow, whatever `Vary` says: docs/DEPLOY.md,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-the-cache-key.html). So its `Cache-Control` goes
 * out `private`: no shared cache may keep it, and a browser reads it as it read the upstream's
 * (`public`, `s-maxage` and `proxy-revalidate` speak to shared caches only; every other
 * directive is kept). An error is the exception: CloudFront keeps a 4xx or 5xx that states a
 * lifetime (`max-age`, `s-maxage`, `Expires`) whatever else it says ("Control how long
 * CloudFront caches errors",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/custom-error-pages-expiration.html),
 * so a passed error states none (and the distribution's error caching minimum is 0).
 */
import { cacheDirectives } from './traffic.js';

/** RFC 9110 §5.6.2 token: a directive value written without quotes. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Directives only shared caches read: dropped from an answer no shared cache may keep. */
const SHARED_ONLY = new Set(['public', 's-maxage', 'proxy-revalidate', 'private']);

/** Lifetimes CloudFront reads on an error, `private` or not. */
const ERROR_LIFETIMES = new Set(['max-age', 'stale-while-revalidate', 'stale-if-error']);

/**
 * An answer's `Cache-Control` as it leaves a pass-through: `private`, the browser's directives
 * kept, but no lifetime on an error (`status` >= 400; its `Expires` goes too, in `servePass`).
 */
export function privateCacheControl(upstream: string | undefined, status = 200): string {
  const kept = [...cacheDirectives(upstream)]
    .filter(([name]) => !SHARED_ONLY.has(name) && !(status >= 400 && ERROR_LIFETIMES.has(name)))
    .map(([name, value]) =>
      value === '' ? name : `${name}=${TOKEN.test(value) ? value : `"${value}"`}`,
    );
  return ['private', ...kept].join(', ');
}
