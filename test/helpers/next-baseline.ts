/**
 * The fixture Next.js app as `next start` serves it: the baseline the service must reproduce
 * ("as it does under next start alone"). Each case makes its requests against a target and
 * asserts what a viewer must get (status, body, Content-Type, Location, Set-Cookie, Vary, ...).
 * `nextStart` holds what next start alone adds (x-nextjs-cache, its Cache-Control), which a
 * cache in front may answer its own way. Run the cases in order: the later ones revalidate.
 *
 *   for (const c of NEXT_BASELINE) it(c.name, () => c.viewer({ url: serviceUrl }));
 */
import type { Answer } from './next-http.js';
import { featureCases } from './next-baseline-features.js';
import { flowCases } from './next-baseline-flows.js';
import { assetCases, pageCases } from './next-baseline-pages.js';

/** Where the requests go: `next start` itself, or the service in front of it. */
export interface NextTarget {
  /** Base URL without a trailing slash. */
  readonly url: string;
}

export interface BaselineCase {
  readonly name: string;
  /** Makes the requests and asserts what a viewer gets; resolves with the answers it checked. */
  readonly viewer: (target: NextTarget) => Promise<readonly Answer[]>;
  /** What next start alone sends besides, checked on the same answers. */
  readonly nextStart?: (answers: readonly Answer[]) => void;
}

export const NEXT_BASELINE: readonly BaselineCase[] = [
  ...pageCases,
  ...assetCases,
  ...featureCases,
  ...flowCases,
];

export { ask, renderId, type Answer } from './next-http.js';
