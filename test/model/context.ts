/** The configuration every model run shares, and how a run reports a broken invariant. */
import {
  loadOriginConfig,
  loadRevalidateConfig,
  loadWorkerConfig,
  type OriginConfig,
  type RevalidateConfig,
  type WorkerConfig,
} from '../../lambda/shared/config.js';
import { MAX_SKEW_SECONDS } from './plan.js';
import { TENANT_HEADER, TENANTS } from './tenants.js';
import { LEASE_SECONDS, REVALIDATE_SECONDS } from './world.js';

export interface ModelContext {
  readonly endpoints: { readonly dynamodb: string; readonly s3: string };
  readonly workerConfig: WorkerConfig;
  readonly originConfig: OriginConfig;
  readonly revalidateConfig: RevalidateConfig;
}

/**
 * The configuration every model run uses: the lease, freshness and skew margin the plans assume;
 * with `tenants`, multi-tenant mode (each tenant's public origin at `https://<tenant>.example`).
 */
export function modelContext(
  endpoints: ModelContext['endpoints'],
  tableName: string,
  bucketName: string,
  tenants?: readonly string[],
): ModelContext {
  const env = {
    FACETHEORY_CACHE_TABLE_NAME: tableName,
    ISR_BODY_BUCKET: bucketName,
    ISR_QUEUE_URL: 'http://localhost/unused.fifo',
    ISR_DLQ_URL: 'http://localhost/unused-dlq.fifo',
    ISR_LEASE_SECONDS: String(LEASE_SECONDS),
    // the largest skew between two actors, each up to MAX_SKEW_SECONDS off true time
    ISR_CLOCK_SKEW_MARGIN_SECONDS: String(2 * MAX_SKEW_SECONDS),
    ISR_REVALIDATE_SECONDS: String(REVALIDATE_SECONDS),
    ISR_DEPLOY_ID: 'model',
    // The fewest kept versions: publishes drop versions (row and body) as often as possible.
    ISR_KEEP_VERSIONS: '2',
    // Two shards, so the keys spread over both; an origin reuses a read for a whole second of
    // model time (time moves in whole seconds), and the 202 waits as long (`sleepingClockFor`).
    ISR_REVALIDATION_SHARDS: '2',
    ISR_IN_PROGRESS_CACHE_MS: '1000',
    // Pages have an RSC variant (`rsc: 1`), as a Next.js site's do (its own key and META).
    ISR_VARIANT_HEADERS: JSON.stringify([{ name: 'rsc', values: ['1'] }]),
    // A key whose render was not to be stored is passed for 5 minutes (the default).
    ISR_HIT_FOR_PASS_SECONDS: '300',
    ...(tenants === undefined
      ? {}
      : {
          ISR_TENANT_HEADER: TENANT_HEADER,
          ISR_TENANTS: tenants.join(','),
          ISR_TENANT_ORIGINS: JSON.stringify(
            Object.fromEntries(tenants.map((tenant) => [tenant, `https://${tenant}.example`])),
          ),
        }),
  };
  return {
    endpoints,
    workerConfig: loadWorkerConfig(env),
    originConfig: loadOriginConfig(env),
    revalidateConfig: loadRevalidateConfig(env),
  };
}

const contexts = new WeakMap<ModelContext, ModelContext>();
/** `context` in multi-tenant mode: the same table, bucket and settings, with the two tenants. */
export function tenantContext(context: ModelContext): ModelContext {
  const known = contexts.get(context);
  if (known !== undefined) return known;
  const { tableName, bucket } = context.workerConfig;
  const made = modelContext(context.endpoints, tableName, bucket, TENANTS);
  contexts.set(context, made);
  return made;
}

export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
}

export const START = 1_900_000_000;
/** How long a planned rollback holds its page. */
export const HOLD_SECONDS = 3 * LEASE_SECONDS;
