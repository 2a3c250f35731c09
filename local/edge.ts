/**
 * What `npm start` and the whole-site tests run in CloudFront's place: the local CloudFront
 * (`local/cloudfront/`) with the distribution the construct synthesizes for the settings the
 * origin reads, its function URL origin answered by the origin handler, and its upstream origin
 * (`isr-upstream`) by `RENDER_ORIGIN_URL` (none without one: the demo renders everything
 * itself). The upstream has no shared secret locally.
 */
import { UPSTREAM_ORIGIN_ID } from '../lib/edge/viewer-request-function.js';
import type { Clock } from '../lambda/core/clock.js';
import type { SettingValues } from '../lambda/core/settings/table.js';
import { LocalCloudFront, type LocalCloudFrontOptions } from './cloudfront/cloudfront.js';
import type { EdgeConfig } from './cloudfront/config.js';
import {
  FunctionUrlOrigin,
  HttpOrigin,
  type LocalOrigin,
  type FunctionUrlHandler,
} from './cloudfront/origins.js';
import { edgePropsOf, loadEdgeConfig } from './cloudfront/synth.js';
import { lambdaContext } from './worker-poller.js';

export interface LocalEdgeOptions {
  /** The settings the origin reads (`loadSettings('origin', env)`, or an origin config's). */
  readonly settings: Partial<SettingValues>;
  /** The origin function's handler, behind its function URL (buffered or streaming). */
  readonly handler: FunctionUrlHandler;
  readonly functionTimeoutMs: number;
  /**
   * Where the synthesized edge is kept between runs (`.local/edge`).
   * @default - synthesized on every call
   */
  readonly cacheDirectory?: string | undefined;
  readonly clock?: Pick<Clock, 'now'> | undefined;
  /** Changes the edge before it runs (a test's negative control). */
  readonly alter?: ((config: EdgeConfig) => EdgeConfig) | undefined;
  readonly cache?: LocalCloudFrontOptions['cache'];
}

export interface LocalEdge {
  readonly cloudfront: LocalCloudFront;
  /** Whether the distribution was synthesized now (false: read from the cache directory). */
  readonly synthesized: boolean;
}

/** The local CloudFront for `settings`, as the construct would configure it. */
export async function localCloudFront(options: LocalEdgeOptions): Promise<LocalEdge> {
  const loaded = await loadEdgeConfig(edgePropsOf(options.settings), options.cacheDirectory);
  const config = options.alter?.(loaded.config) ?? loaded.config;
  const origins: Record<string, LocalOrigin> = {};
  for (const origin of Object.values(config.origins)) {
    if (origin.kind === 'function-url') {
      origins[origin.id] = new FunctionUrlOrigin({
        handler: options.handler,
        context: () => lambdaContext(options.functionTimeoutMs, 'isr-origin'),
        signing: origin.signing,
      });
    } else if (origin.id === UPSTREAM_ORIGIN_ID && options.settings.renderOriginUrl !== undefined) {
      origins[origin.id] = new HttpOrigin({
        url: options.settings.renderOriginUrl,
        originPath: origin.originPath,
        customHeaders: origin.customHeaders,
        readTimeoutMs: origin.readTimeoutSeconds * 1000,
      });
    }
  }
  const cloudfront = new LocalCloudFront({
    config,
    origins,
    clock: options.clock,
    cache: options.cache,
  });
  return { cloudfront, synthesized: loaded.synthesized };
}
