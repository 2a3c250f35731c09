/**
 * The path CloudFront matches a cache behaviour's path pattern against. The Developer Guide
 * ("Cache behavior settings", Path pattern,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/DownloadDistValuesCacheBehavior.html#DownloadDistValuesPathPattern):
 * "CloudFront normalizes URI paths consistent with RFC 3986 and then matches the path with the
 * correct cache behavior. Once the cache behavior is matched, CloudFront sends the raw URI path
 * to the origin", and "some characters are normalized and removed from the path, such as
 * multiple slashes (//) or periods (..)". The traffic rules match the same path, so the viewer
 * request function, the behaviours and the local CloudFront pick one class for one request.
 * Embedded in the CloudFront Function (written in its runtime's subset, see traffic-rules.ts).
 */

/**
 * RFC 3986 §6.2.2 on a path: percent-encoded unreserved characters decoded (`/%61pi` is
 * `/api`), other escapes upper-cased, dot segments removed (§5.2.4), repeated slashes collapsed.
 * Embedded.
 */
export function normalisedPathOf(path: string): string {
  if (path.charAt(0) !== '/') return path;
  const hex = '0123456789ABCDEF';
  let text = '';
  for (let i = 0; i < path.length; i++) {
    const hi = hex.indexOf(path.charAt(i + 1).toUpperCase());
    const lo = hex.indexOf(path.charAt(i + 2).toUpperCase());
    if (path.charAt(i) !== '%' || i + 2 >= path.length || hi < 0 || lo < 0) {
      text += path.charAt(i);
      continue;
    }
    const c = String.fromCharCode(hi * 16 + lo);
    const kept =
      hi < 8 && (c.toLowerCase() !== c.toUpperCase() || '0123456789-._~'.indexOf(c) >= 0);
    text += kept ? c : '%' + hex.charAt(hi) + hex.charAt(lo);
    i += 2;
  }
  const parts = text.split('/');
  const out = [];
  for (let i = 1; i < parts.length; i++) {
    const last = i === parts.length - 1;
    if (parts[i] === '..') out.pop();
    if (parts[i] === '.' || parts[i] === '..' || (parts[i] === '' && !last)) {
      if (last) out.push('');
      continue;
    }
    out.push(parts[i]);
  }
  return '/' + out.join('/');
}
