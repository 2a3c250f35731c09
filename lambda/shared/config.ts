/**
 * Every environment variable the service's own code acts on, read once at cold start (the entry
 * points pass `process.env` in) by the settings table (`core/settings/table.ts`): the reader
 * `cdk synth` runs on the environment it writes, so a deploy synth accepted starts. A bad or
 * missing value fails with a message naming the variable. Libraries read their own variables:
 * Powertools (`POWERTOOLS_*`) and the AWS SDK (`AWS_REGION`, credentials).
 */
import { ConfigError } from '../core/errors.js';
import { compilePathPatterns } from '../core/path-patterns.js';
import { DEFAULT_KEPT_HEADERS_MAX_BYTES, internalHeaderSet } from '../core/response-headers.js';
import {
  PRESET,
  presetOf,
  readSettings,
  SETTINGS,
  TABLE,
  type Reader,
  type SettingsTable,
  type SettingValues,
} from '../core/settings/index.js';

type Env = Record<string, string | undefined>;

/** A setting's environment variable: how a cold start names it in a message. */
export const envNameOf = (key: string): string =>
  (SETTINGS as Record<string, { env: string } | undefined>)[key]?.env ?? key;

/** What `reader` reads from `env`, every rule applied; a ConfigError lists every problem. */
export function loadSettings(reader: Reader, env: Env): SettingValues {
  const { values, problems } = readSettings(TABLE, reader, env, { nameOf: envNameOf });
  if (problems.length > 0) {
    const lines = problems.map((problem) => `  ${problem}`).join('\n');
    throw new ConfigError(`${reader} configuration is invalid:\n${lines}`);
  }
  return values as SettingValues;
}

export type ServiceConfig = ReturnType<typeof toServiceConfig>;
export type WorkerConfig = ReturnType<typeof loadWorkerConfig>;
export type OriginConfig = ReturnType<typeof loadOriginConfig>;
export type SweeperConfig = ReturnType<typeof loadSweeperConfig>;
export type RevalidateConfig = ReturnType<typeof loadRevalidateConfig>;
export type PurgerConfig = ReturnType<typeof loadPurgerConfig>;

function toServiceConfig(s: SettingValues) {
  return {
    /** Every setting this function reads, as the table names it (a new setting lands here). */
    settings: s,
    tableName: s.tableName!,
    bucket: s.bodyBucket!,
    keyPolicy: {
      allowedQueryParams: s.allowedQueryParams,
      renderable: s.renderPaths.length === 0 ? undefined : compilePathPatterns(s.renderPaths),
      variants: s.variantHeaders,
      keyRules: s.keyRules,
    },
    defaultRevalidateSeconds: s.revalidateSeconds,
    hitForPassSeconds: (s as { hitForPassSeconds?: number }).hitForPassSeconds ?? 0,
    headerPolicy: {
      keep: s.keptHeaders,
      maxBytes: DEFAULT_KEPT_HEADERS_MAX_BYTES,
      internal: internalHeaderSet([s.upstreamTagHeader, s.cacheTagHeader]),
    },
    retention: { idleSeconds: s.metaTtlSeconds, goneSeconds: s.goneTtlSeconds },
    /** Where the upstream's shared secret lives and the header it goes in; never the value. */
    upstreamSecret:
      s.upstreamSecretArn === undefined
        ? undefined
        : { arn: s.upstreamSecretArn, header: s.upstreamSecretHeader },
    // `renderPaths` (the patterns behind `keyPolicy.renderable`) is kept for tools that rebuild
    // it (the ops CLI); `functionName` is the lease owner in LOCK rows, unset outside Lambda.
    ...pick(s, [
      'renderPaths',
      'tenantHeader',
      'tenants',
      'deployId',
      'leaseSeconds',
      'clockSkewMarginSeconds',
      'renderTimeoutMs',
      'maxBodyBytes',
      'setCookie',
      'bodyKeyPrefix',
      'cacheTagHeader',
      'upstreamTagHeader',
      'publicOrigin',
      'keepVersions',
      'goneInlineMaxBytes',
      'renderOriginUrl',
      'functionTimeoutMs',
      'localMode',
      'functionName',
    ]),
  };
}

export function loadWorkerConfig(env: Env = process.env) {
  const s = loadSettings('worker', env);
  return {
    ...toServiceConfig(s),
    ...pick(s, [
      'revalidationShards',
      'fanOutBatchSize',
      'fanOutConcurrency',
      'maxReceiveCount',
      'idempotencyTtlSeconds',
      'regenerationBudget',
    ]),
    dlqUrl: s.dlqUrl!,
    queueUrl: s.queueUrl!,
    softPurge: softPurgeOf(s),
  };
}

/**
 * Settings a function reads as the table names them, each with its table entry's type and TSDoc
 * (a `Pick`), so the builders below list names instead of copying values one by one.
 */
function pick<K extends keyof SettingValues>(s: SettingValues, keys: readonly K[]) {
  return Object.fromEntries(keys.map((key) => [key, s[key]])) as Pick<SettingValues, K>;
}

/**
 * Soft purges (`core/revalidate/soft-purge.ts`) as the revalidate function and the worker read
 * them; undefined without a purge queue (a revalidation then purges at once).
 */
function softPurgeOf(s: SettingValues) {
  if (s.purgeQueueUrl === undefined) return undefined;
  return {
    queueUrl: s.purgeQueueUrl,
    deadlineSeconds: s.purgeDeadlineSeconds,
    maxPagesPerEffect: s.softPurgeMaxPages,
  };
}

/** The purger: its DLQ, the table its pending purges wait in, the distribution it purges. */
export function loadPurgerConfig(env: Env = process.env) {
  const s = loadSettings('purger', env);
  return {
    settings: s,
    tableName: s.tableName!,
    purgeDlqUrl: s.purgeDlqUrl!,
    /** The CloudFront distribution purged by cache tag; unset: purges answer `not-configured`. */
    cdnDistributionId: s.cdnDistributionId,
    maxReceiveCount: s.maxReceiveCount,
    functionTimeoutMs: s.functionTimeoutMs,
    functionName: s.functionName,
  };
}

export function loadOriginConfig(env: Env = process.env) {
  const s = loadSettings('origin', env);
  return {
    ...toServiceConfig(s),
    queueUrl: s.queueUrl!,
    ...pick(s, [
      'overloadFallbackPath',
      'dedupeWindowSeconds',
      'missWaitMs',
      'passTimeoutMs',
      'passBodyMaxBytes',
      'retryAfterSeconds',
      'staleSharedMaxAge',
      'staleWhileRevalidateSeconds',
      'staleIfErrorSeconds',
      'nextCacheHeader',
      'missRenderLimit',
      'revalidationShards',
      'inProgressCacheMs',
      'regenerationBudget',
    ]),
  };
}

export function loadSweeperConfig(env: Env = process.env) {
  const s = loadSettings('sweeper', env);
  return {
    ...toServiceConfig(s),
    ...pick(s, ['orphanAgeSeconds', 'sweepPageLimit', 'orphanListLimit', 'fanOutStalledSeconds']),
    queueUrl: s.queueUrl!,
    /** Whose pending purges each run submits again; unset: none to submit. */
    cdnDistributionId: s.cdnDistributionId,
    /** Deferred intents are re-queued within this budget; unset: none are deferred. */
    regenerationBudget: s.regenerationBudget,
  };
}

/**
 * The revalidate function: the origin's cache-key and tenancy settings (a path is refused where
 * the origin would refuse it), the queue, and its own limits and webhook key.
 */
export function loadRevalidateConfig(env: Env = process.env) {
  const s = loadSettings('revalidate', env);
  return {
    ...toServiceConfig(s),
    queueUrl: s.queueUrl!,
    /** The webhook key's secret ARN: HMAC mode when set. */
    revalidateSecretArn: s.revalidateSecretArn,
    /** The CloudFront distribution purged by cache tag; unset: the receipt says `not-configured`. */
    cdnDistributionId: s.cdnDistributionId,
    ...pick(s, [
      'revalidateMaxPaths',
      'revalidateMaxTags',
      'revalidateSkewSeconds',
      'revalidateKeyTtlSeconds',
      'revalidationShards',
      'inProgressCacheMs',
      'fanOutBatchSize',
      'fanOutConcurrency',
    ]),
    softPurge: softPurgeOf(s),
  };
}

/** What `npm start` reads for itself: where it listens, its data, its revalidation secret. */
export function loadLocalConfig(env: Env) {
  const s = loadSettings('local', env);
  return {
    port: s.port,
    host: s.localBindAddress,
    dataDir: s.localDataDir,
    revalidateSecret: s.revalidateSecret,
    maxReceiveCount: s.maxReceiveCount,
    edgeCache: s.localEdgeCache,
  };
}

/**
 * `npm start`'s defaults (a shorter freshness, a local deploy id…) for what `env` leaves unset
 * and its preset does not set, as environment variables its functions read.
 */
export function localDefaults(env: Env, table: SettingsTable = TABLE): Record<string, string> {
  const presetSetting = table.settings[PRESET];
  const preset = presetOf(table, presetSetting && env[presetSetting.env]?.trim());
  const defaults: Record<string, string> = {};
  for (const [key, spec] of Object.entries(table.settings)) {
    if (spec.local === undefined || env[spec.env] !== undefined || Object.hasOwn(preset, key)) {
      continue;
    }
    defaults[spec.env] = spec.codec.encode(spec.local);
  }
  return defaults;
}
