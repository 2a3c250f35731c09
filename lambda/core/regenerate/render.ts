/**
 * The render itself, as a regeneration runs it: inside a render slot when renders are capped,
 * with a timeout, stopped early when the lease is lost, whatever the renderer does; and what the
 * cache policy dropped from the page, logged.
 */
import type { CacheKey, RenderResult } from '../page/model.js';
import { epochSeconds } from '../clock.js';
import { IsrError, RenderOverloadedError, RenderRetryableError } from '../errors.js';
import type { AdmittedPage } from './render-policy.js';
import type { RegenerateDeps } from './deps.js';

/** Runs the render inside an admission slot, when there is a cap. @throws RenderOverloadedError */
export async function renderInSlot<T>(
  deps: Pick<RegenerateDeps, 'admission' | 'clock' | 'renderTimeoutMs' | 'log'>,
  owner: string | undefined,
  render: () => Promise<T>,
): Promise<T> {
  if (deps.admission === undefined) return render();
  const holdSeconds = Math.ceil(deps.renderTimeoutMs / 1000) + 1;
  const ticket = await deps.admission.enter(epochSeconds(deps.clock), holdSeconds, owner);
  if (ticket === undefined) {
    throw new RenderOverloadedError('every render slot is taken; try again shortly');
  }
  try {
    return await render();
  } finally {
    await deps.admission.leave(ticket).catch((error: unknown) => {
      deps.log?.warn('render slot release failed; it expires on its own', { error });
    });
  }
}

/**
 * Renders with a timeout on the clock, and stops early if the lease is lost, whatever the
 * renderer does: the signal it gets aborts on either, and the race ends when it does.
 */
export async function renderUnderLease(
  deps: Pick<RegenerateDeps, 'renderer' | 'renderTimeoutMs' | 'clock'>,
  cacheKey: CacheKey,
  leaseSignal: AbortSignal,
): Promise<RenderResult | 'lease-lost'> {
  const finished = new AbortController();
  const timeout = new AbortController();
  void deps.clock.sleep(deps.renderTimeoutMs, finished.signal).then(() => {
    if (!finished.signal.aborted)
      timeout.abort(new DOMException('render timed out', 'TimeoutError'));
  });
  const signal = AbortSignal.any([leaseSignal, timeout.signal]);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([deps.renderer.render({ cacheKey, signal }), aborted]);
  } catch (error) {
    if (leaseSignal.aborted) return 'lease-lost';
    if (timeout.signal.aborted) {
      const message = `render timed out after ${deps.renderTimeoutMs} ms`;
      throw new RenderRetryableError(message, undefined, { cause: error });
    }
    if (error instanceof IsrError) throw error;
    throw new RenderRetryableError('render failed', undefined, { cause: error });
  } finally {
    finished.abort();
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

/** What the policy dropped is logged: a cookie, a tag CloudFront could not use. */
export function logDropped(
  deps: Pick<RegenerateDeps, 'log'>,
  cacheKey: CacheKey,
  page: AdmittedPage,
): void {
  if (page.strippedCookies.length > 0) {
    deps.log?.warn('Set-Cookie dropped from a cached page: cookies are per viewer', {
      cacheKeyHash: cacheKey.hash,
      cookies: page.strippedCookies,
    });
  }
  if (page.droppedTags.length > 0) {
    deps.log?.warn('tags dropped from a page: invalid, or past the 49th', {
      cacheKeyHash: cacheKey.hash,
      tags: page.droppedTags,
    });
  }
}
