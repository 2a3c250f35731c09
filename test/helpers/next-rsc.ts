/**
 * The RSC requests Next's client router makes, and the `_rsc` search param it adds to them.
 * `next start` checks `_rsc` against these headers and answers a mismatch with a 307 to the
 * right value (next/dist/server/base-server.js, `validateRSCRequestHeaders`).
 */
import { nextRscParamOf } from '../../lambda/core/page/variants.js';

/** The request headers that select an RSC variant (lower case, as Node hands them over). */
export interface RscHeaders {
  readonly rsc: '1';
  readonly 'next-router-prefetch'?: '1' | '2' | '3';
  readonly 'next-router-segment-prefetch'?: string;
  readonly 'next-router-state-tree'?: string;
  readonly 'next-url'?: string;
}

/** Full navigation to a page (the client also sends its router state tree; optional here). */
export const navigationHeaders = (): RscHeaders => ({ rsc: '1' });

/** The segment cache's first prefetch of a route: its tree (`/_tree`). */
export const treePrefetchHeaders = (): RscHeaders => ({
  rsc: '1',
  'next-router-prefetch': '1',
  'next-router-segment-prefetch': '/_tree',
});

/** A prefetch of one segment, e.g. `/isr/__PAGE__` or `/posts/$d$slug/__PAGE__`. */
export const segmentPrefetchHeaders = (segmentPath: string): RscHeaders => ({
  rsc: '1',
  'next-router-prefetch': '1',
  'next-router-segment-prefetch': segmentPath,
});

/** `_rsc` as Next 16.4 computes it: the service's own computation (`core/page/variants.ts`). */
export const rscSearchParam = (headers: RscHeaders): string => nextRscParamOf({ ...headers });

/** The URL the client router fetches: the path with `_rsc` appended (bare `_rsc` when empty). */
export function rscUrl(base: string, path: string, headers: RscHeaders): string {
  const hash = rscSearchParam(headers);
  const separator = path.includes('?') ? '&' : '?';
  return `${base}${path}${separator}_rsc${hash === '' ? '' : `=${hash}`}`;
}
