/**
 * `facetheory-isr/next`: the Next.js adapter. Its default export is the `cacheHandler` class
 * (`cacheHandler: import.meta.resolve('facetheory-isr/next')` in next.config.js); the rest lets
 * scripts compute what the adapter sends. It imports neither the CDK nor the AWS SDK clients.
 */
import { createCacheHandler } from './cache-handler.js';

export { createCacheHandler, type AdapterOptions, type CacheValue } from './cache-handler.js';
export { RevalidationFailedError, type AdapterLog, type RetryPolicy } from './client.js';
export { AdapterConfigError, loadAdapterConfig, type AdapterConfig } from './config.js';
export { modeOf, revalidationBodiesOf, targetsOf, type RevalidationBody } from './revalidations.js';
export { pageTagsOf, pathOfSoftTag, serviceTagOf } from './tags.js';
export {
  signatureOf,
  signedStringOf,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  type SignedParts,
} from '../lambda/core/revalidate/webhook-signature.js';

/** The cache handler over `next start`'s environment. */
const FaceTheoryCacheHandler = createCacheHandler();
export default FaceTheoryCacheHandler;
