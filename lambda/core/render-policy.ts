/**
 * What an upstream status means for the cache. Documented in the README:
 * - 2xx: publish the page.
 * - 301/302/303/307/308: publish the redirect (the `Location` is kept on META).
 * - 404/410: publish too. The page is gone; it is served with that status until the next
 *   regeneration, and never retried in a loop.
 * - 408/425/429 and 5xx: retryable. The last good page stays live; the message is retried until
 *   its receive budget is spent, then dead-lettered with the reason.
 * - anything else (other 4xx, 1xx, 304...): rejected for good, last good page kept, dead-lettered.
 */
export const RenderDisposition = {
  Publish: 'publish',
  Retry: 'retry',
  Reject: 'reject',
} as const;
export type RenderDisposition = (typeof RenderDisposition)[keyof typeof RenderDisposition];

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const GONE = new Set([404, 410]);
const TRANSIENT = new Set([408, 425, 429]);

export function renderDisposition(status: number): RenderDisposition {
  if ((status >= 200 && status < 300) || REDIRECTS.has(status) || GONE.has(status)) {
    return RenderDisposition.Publish;
  }
  if (status >= 500 || TRANSIENT.has(status)) return RenderDisposition.Retry;
  return RenderDisposition.Reject;
}
