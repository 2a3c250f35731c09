/**
 * The local CloudFront of a test: the distribution the construct synthesizes for `settings`
 * (kept in `.local/edge` by a digest of the settings and the sources, so only the first
 * run after a change pays the synth), its function URL origin answered by `handler`.
 */
import type { SettingValues } from '../../lambda/core/settings/table.js';
import type { FunctionUrlHandler } from '../../local/cloudfront/origins.js';
import { localCloudFront, type LocalEdgeOptions } from '../../local/edge.js';
import type { LocalCloudFront } from '../../local/cloudfront/cloudfront.js';

/** Where tests keep synthesized edges between runs: where `npm start` keeps its own. */
export { EDGE_CACHE_DIRECTORY as TEST_EDGE_CACHE } from '../../local/cloudfront/synth.js';
import { EDGE_CACHE_DIRECTORY as TEST_EDGE_CACHE } from '../../local/cloudfront/synth.js';

export async function testCloudFront(
  settings: Partial<SettingValues>,
  handler: FunctionUrlHandler,
  options: Partial<Omit<LocalEdgeOptions, 'settings' | 'handler'>> = {},
): Promise<LocalCloudFront> {
  const { cloudfront } = await localCloudFront({
    settings,
    handler,
    functionTimeoutMs: 30_000,
    cacheDirectory: TEST_EDGE_CACHE,
    ...options,
  });
  return cloudfront;
}
