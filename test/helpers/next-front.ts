/**
 * `npm start`'s front over the fixture Next.js app, as test/next/whole-site.test.ts wires it:
 * the local CloudFront of the synthesized distribution, the origin (streaming, as deployed) on
 * in-memory ports, the HTTP renderer and pass-through, from the settings `npm start` reads.
 * Renders are counted by cache key.
 */
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import { loadOriginConfig, type OriginConfig } from '../../lambda/shared/config.js';
import { createObservability } from '../../lambda/shared/observability.js';
import type { LocalCloudFront } from '../../local/cloudfront/cloudfront.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { testCloudFront } from './local-cloudfront.js';
import { memoryService, type MemoryService } from './memory-service.js';
import { TestClock } from './clock.js';
import { observed, streamingOrigin } from './streaming-origin.js';

/**
 * Virtual time for an origin serving real HTTP: a sleep the work waits on in line (a MISS
 * waiting for another holder's publish, a publish's backoff: no signal) passes at once, as
 * `runUntil` would pass it; a timer beside the work (a render's or a pass-through's timeout:
 * it has a signal) waits for the test to move the clock. Without this, nobody moves the clock
 * and a waiter hangs (issue 22: two requests for one page at once, no preset).
 */
export class InlineTestClock extends TestClock {
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal !== undefined) return super.sleep(ms, signal);
    this.slept.push(ms);
    this.advanceMs(ms);
    return Promise.resolve();
  }
}

export interface NextFront {
  readonly front: HttpFront;
  readonly config: OriginConfig;
  readonly service: MemoryService;
  /** The cache key of every render the origin asked the app for, in order. */
  readonly renders: string[];
  /** How many requests reached the origin function. */
  readonly originCalls: () => number;
  readonly clock: TestClock;
  /** The local CloudFront in front (its clock is the test's). */
  readonly cloudfront: LocalCloudFront;
}

/** The origin's settings as `npm start` reads them: `env` over the app upstream. */
export const frontConfig = (upstream: string, env: Readonly<Record<string, string>>) =>
  loadOriginConfig({
    RENDER_ORIGIN_URL: upstream,
    FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
    ISR_BODY_BUCKET: 'isr-bodies',
    ISR_QUEUE_URL: 'http://127.0.0.1:1/queue/isr-regeneration',
    ...env,
  });

/** The front over `appUrl`, with `env` as `npm start`'s environment (e.g. ISR_PRESET). */
export async function startNextFront(
  appUrl: string,
  env: Readonly<Record<string, string>>,
  options: { readonly clock?: TestClock } = {},
): Promise<NextFront> {
  const config = frontConfig(appUrl, env);
  const renders: string[] = [];
  const http = new HttpRenderer({
    originUrl: appUrl,
    maxBodyBytes: config.maxBodyBytes,
    variantParam: config.settings.variantParam,
  });
  const renderer: Renderer = {
    render: (request) => {
      renders.push(request.cacheKey.key);
      return http.render(request);
    },
  };
  const clock = options.clock ?? new InlineTestClock();
  const service = memoryService({
    renderer,
    clock,
    passThrough: new HttpPassThrough({ originUrl: appUrl, maxBodyBytes: config.passBodyMaxBytes }),
    keyPolicy: config.keyPolicy,
    hitForPassSeconds: config.hitForPassSeconds,
  });
  // The origin as deployed: RESPONSE_STREAM, called as Lambda's runtime calls it.
  const handler = streamingOrigin({
    deps: service.originDeps,
    tenantHeader: undefined,
    ...createObservability('origin'),
  });
  let calls = 0;
  const counted = observed(handler, () => {
    calls += 1;
  });
  const cloudfront = await testCloudFront(config.settings, counted, { clock });
  const front = await startHttpFront({
    handler: counted,
    port: 0,
    tenantHeader: undefined,
    variantHeaders: config.settings.variantHeaders.map((rule) => rule.name),
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront,
  });
  return { front, config, service, renders, originCalls: () => calls, clock, cloudfront };
}
