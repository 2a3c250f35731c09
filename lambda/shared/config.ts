/**
 * Every environment variable the service's own code acts on, parsed once at cold start (the
 * entry points pass `process.env` in). valibot checks types; the defaults and every rule come from
 * `core/settings.ts`, the module `cdk synth` applies too, so a deploy synth accepted starts.
 * A bad or missing value fails with a message naming the variable. Libraries read their own
 * variables: Powertools (`POWERTOOLS_*`) and the AWS SDK (`AWS_REGION`, credentials).
 */
import * as v from 'valibot';
import { ConfigError } from '../core/errors.js';
import { cdnDistributionIdOf } from './cdn-env.js';
import { compilePathPatterns } from '../core/path-patterns.js';
import { DEFAULT_KEPT_HEADERS_MAX_BYTES } from '../core/response-headers.js';
import {
  normaliseHeaderName,
  SECRET_ARN,
  SETTING_DEFAULTS as D,
  settingsProblems,
  type FunctionCheck,
  type NameOf,
  type ServiceSettings,
} from '../core/settings.js';

/** Text, trimmed; blank reads as unset. */
const optionalText = v.pipe(
  v.optional(v.string()),
  v.transform((value) => (value?.trim() ? value.trim() : undefined)),
);
const integerText = v.pipe(
  v.string(),
  v.transform(Number),
  v.number('must be a number'),
  v.integer('must be an integer'),
);
const int = (fallback: number) => v.optional(integerText, String(fallback));
const optionalInt = v.optional(integerText);
const splitList = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
const list = v.pipe(v.optional(v.string(), ''), v.transform(splitList));
/** A list where unset and empty differ (empty names nobody; unset takes `fallback`). */
const listOr = <T>(fallback: T) =>
  v.pipe(
    v.optional(v.string()),
    v.transform((value) => (value === undefined ? fallback : splitList(value))),
  );
const url = v.pipe(v.string(), v.url('must be a URL'));
const headerName = v.pipe(
  optionalText,
  v.transform((value) => value && normaliseHeaderName(value)),
);

const SERVICE_ENV = {
  /** Canonical FaceTheory name of the cache table. */
  FACETHEORY_CACHE_TABLE_NAME: v.pipe(v.string(), v.minLength(3)),
  ISR_BODY_BUCKET: v.pipe(v.string(), v.minLength(3)),
  /** Query parameters that are part of the cache key, comma-separated. */
  ISR_ALLOWED_QUERY_PARAMS: list,
  /** Path patterns that may be rendered at all, comma-separated (`/blog/*`, `/docs/**`); unset: all. */
  ISR_RENDER_PATHS: list,
  /** Upstream response headers kept with a page, comma-separated; unset keeps the default list. */
  ISR_KEPT_HEADERS: listOr<readonly string[]>(D.keptHeaders),
  /** `strip` (default): a page's Set-Cookie is dropped; `refuse`: such a page is not cached. */
  ISR_SET_COOKIE: v.optional(v.string(), D.setCookie),
  /** Where bodies are written (IAM is scoped to it). */
  ISR_BODY_PREFIX: v.optional(v.string(), D.bodyKeyPrefix),
  /** The header the origin lists a page's CDN cache tags in. */
  ISR_CACHE_TAG_HEADER: v.optional(headerName, D.cacheTagHeader),
  /** The upstream response header a page's tags come from (comma-separated). */
  ISR_UPSTREAM_TAG_HEADER: v.optional(headerName, D.upstreamTagHeader),
  /** When set, multi-tenant mode: the tenant comes from this request header. */
  ISR_TENANT_HEADER: headerName,
  /**
   * Tenants the origin serves, comma-separated; unset serves any well-formed tenant. Set but
   * naming nobody is refused (fail closed), never read as "any tenant".
   */
  ISR_TENANTS: listOr<string[] | undefined>(undefined),
  /** Bump when rendering behaviour changes, so old intents never collide with new ones. */
  ISR_DEPLOY_ID: v.optional(v.string(), D.deployId),
  ISR_LEASE_SECONDS: int(D.leaseSeconds),
  /** Largest clock difference between two workers; a render starts only with more lease left. */
  ISR_CLOCK_SKEW_MARGIN_SECONDS: int(D.clockSkewMarginSeconds),
  ISR_RENDER_TIMEOUT_MS: int(D.renderTimeoutMs),
  /** Freshness of a page that does not ask for its own. */
  ISR_REVALIDATE_SECONDS: int(D.revalidateSeconds),
  ISR_MAX_BODY_BYTES: int(D.maxBodyBytes),
  /** How long a stale page nobody asks for is kept before DynamoDB TTL may collect it. */
  ISR_META_TTL_SECONDS: int(D.metaTtlSeconds),
  /** The same for a 404/410 page. */
  ISR_GONE_TTL_SECONDS: int(D.goneTtlSeconds),
  /** Versions of a page kept for rollback, the live one included. */
  ISR_KEEP_VERSIONS: int(D.keepVersions),
  /** Upstream SSR origin; the demo renderer is used when unset. */
  RENDER_ORIGIN_URL: optionalText,
  /** Secrets Manager secret (ARN, never the value) sent to the upstream in a header. */
  ISR_UPSTREAM_SECRET_ARN: optionalText,
  ISR_UPSTREAM_SECRET_HEADER: headerName,
  /** This function's own timeout (the deploy sets it), so the timeout rule holds at cold start. */
  ISR_FUNCTION_TIMEOUT_MS: optionalInt,
  /** `1` under `npm start`: a plain-http upstream is allowed on any host. */
  ISR_LOCAL_MODE: v.optional(v.picklist(['0', '1'], 'must be 0 or 1')),
  /** Set by the Lambda runtime; names the lease owner in LOCK rows. */
  AWS_LAMBDA_FUNCTION_NAME: optionalText,
};

/** What both functions read, as parsed. */
type ServiceEnv = v.InferOutput<v.ObjectSchema<typeof SERVICE_ENV, undefined>>;

// Pure: a function's bundle keeps only the schema it parses.
const WorkerEnv = /* @__PURE__ */ v.object({
  ...SERVICE_ENV,
  ISR_DLQ_URL: url,
  /** Receives after which a retryable failure is dead-lettered (match the queue's redrive). */
  ISR_MAX_RECEIVE_COUNT: int(D.maxReceiveCount),
  ISR_IDEMPOTENCY_TTL_SECONDS: int(D.idempotencyTtlSeconds),
});

const OriginEnv = /* @__PURE__ */ v.object({
  ...SERVICE_ENV,
  ISR_QUEUE_URL: url,
  /** A stale generation can be re-enqueued after this window (SQS dedupes for 5 minutes). */
  ISR_DEDUPE_WINDOW_SECONDS: int(D.dedupeWindowSeconds),
  /** How long a miss waits for another holder's render before answering 503. */
  ISR_MISS_WAIT_MS: int(D.missWaitMs),
  ISR_RETRY_AFTER_SECONDS: int(D.retryAfterSeconds),
  /** Shared-cache lifetime of a stale response: short, so the regenerated page is picked up soon. */
  ISR_STALE_S_MAXAGE: int(D.staleSharedMaxAge),
  ISR_STALE_WHILE_REVALIDATE_SECONDS: int(D.staleWhileRevalidateSeconds),
  ISR_STALE_IF_ERROR_SECONDS: int(D.staleIfErrorSeconds),
  /** Renders inside viewer requests at once, across every origin instance; 0 turns the cap off. */
  ISR_MISS_RENDER_LIMIT: int(D.missRenderLimit),
  /** A cached page served (as a 503) when the cap is reached, e.g. `/busy`. */
  ISR_OVERLOAD_FALLBACK_PATH: optionalText,
});

const SweeperEnv = /* @__PURE__ */ v.object({
  ...SERVICE_ENV,
  /** A body is retired only once it is older than this (seconds), and nothing points to it. */
  ISR_ORPHAN_AGE_SECONDS: int(D.orphanAgeSeconds),
  /** Status-index rows read per shard per run. */
  ISR_SWEEP_PAGE_LIMIT: int(D.sweepPageLimit),
  /** Bodies listed per run; a cursor row carries the listing on to the next run. */
  ISR_ORPHAN_LIST_LIMIT: int(D.orphanListLimit),
});
const RevalidateEnv = /* @__PURE__ */ v.object({
  ...SERVICE_ENV,
  /** Where `regenerate: true` queues its intents (the origin's queue). */
  ISR_QUEUE_URL: url,
  /**
   * The webhook HMAC key's Secrets Manager secret (ARN, never the value). Set: every request
   * must carry a valid `x-isr-signature`; unset: the function URL's AWS_IAM auth admits callers.
   */
  ISR_REVALIDATE_SECRET_ARN: optionalText,
  ISR_REVALIDATE_MAX_PATHS: int(D.revalidateMaxPaths),
  ISR_REVALIDATE_MAX_TAGS: int(D.revalidateMaxTags),
  ISR_REVALIDATE_SKEW_SECONDS: int(D.revalidateSkewSeconds),
  ISR_REVALIDATE_KEY_TTL_SECONDS: int(D.revalidateKeyTtlSeconds),
});

/** The environment variable behind each setting, for messages. */
const ENV_NAMES: Record<string, string> = {
  renderOriginUrl: 'RENDER_ORIGIN_URL',
  allowedQueryParams: 'ISR_ALLOWED_QUERY_PARAMS',
  tenantHeader: 'ISR_TENANT_HEADER',
  tenants: 'ISR_TENANTS',
  deployId: 'ISR_DEPLOY_ID',
  revalidateSeconds: 'ISR_REVALIDATE_SECONDS',
  leaseSeconds: 'ISR_LEASE_SECONDS',
  clockSkewMarginSeconds: 'ISR_CLOCK_SKEW_MARGIN_SECONDS',
  renderTimeoutMs: 'ISR_RENDER_TIMEOUT_MS',
  maxBodyBytes: 'ISR_MAX_BODY_BYTES',
  metaTtlSeconds: 'ISR_META_TTL_SECONDS',
  functionTimeoutMs: 'ISR_FUNCTION_TIMEOUT_MS',
  upstreamSecret: 'ISR_UPSTREAM_SECRET_ARN',
  upstreamSecretArn: 'ISR_UPSTREAM_SECRET_ARN',
  upstreamSecretHeader: 'ISR_UPSTREAM_SECRET_HEADER',
  localMode: 'ISR_LOCAL_MODE=1',
  maxReceiveCount: 'ISR_MAX_RECEIVE_COUNT',
  idempotencyTtlSeconds: 'ISR_IDEMPOTENCY_TTL_SECONDS',
  missRenderLimit: 'ISR_MISS_RENDER_LIMIT',
  goneTtlSeconds: 'ISR_GONE_TTL_SECONDS',
  keepVersions: 'ISR_KEEP_VERSIONS',
  renderPaths: 'ISR_RENDER_PATHS',
  keptHeaders: 'ISR_KEPT_HEADERS',
  setCookie: 'ISR_SET_COOKIE',
  bodyKeyPrefix: 'ISR_BODY_PREFIX',
  cacheTagHeader: 'ISR_CACHE_TAG_HEADER',
  upstreamTagHeader: 'ISR_UPSTREAM_TAG_HEADER',
  dedupeWindowSeconds: 'ISR_DEDUPE_WINDOW_SECONDS',
  missWaitMs: 'ISR_MISS_WAIT_MS',
  retryAfterSeconds: 'ISR_RETRY_AFTER_SECONDS',
  staleSharedMaxAge: 'ISR_STALE_S_MAXAGE',
  staleWhileRevalidateSeconds: 'ISR_STALE_WHILE_REVALIDATE_SECONDS',
  staleIfErrorSeconds: 'ISR_STALE_IF_ERROR_SECONDS',
  orphanAgeSeconds: 'ISR_ORPHAN_AGE_SECONDS',
  sweepPageLimit: 'ISR_SWEEP_PAGE_LIMIT',
  orphanListLimit: 'ISR_ORPHAN_LIST_LIMIT',
  revalidateMaxPaths: 'ISR_REVALIDATE_MAX_PATHS',
  revalidateMaxTags: 'ISR_REVALIDATE_MAX_TAGS',
  revalidateSkewSeconds: 'ISR_REVALIDATE_SKEW_SECONDS',
  revalidateKeyTtlSeconds: 'ISR_REVALIDATE_KEY_TTL_SECONDS',
};
const envName: NameOf = (key) => ENV_NAMES[key] ?? key;

export type ServiceConfig = ReturnType<typeof toServiceConfig>;
export type WorkerConfig = ReturnType<typeof loadWorkerConfig>;
export type OriginConfig = ReturnType<typeof loadOriginConfig>;
export type SweeperConfig = ReturnType<typeof loadSweeperConfig>;
export type RevalidateConfig = ReturnType<typeof loadRevalidateConfig>;

type Env = Record<string, string | undefined>;

function parse<T extends v.GenericSchema>(schema: T, env: Env, what: string): v.InferOutput<T> {
  const result = v.safeParse(schema, env);
  if (result.success) return result.output;
  const problems = result.issues.map(
    (issue) => `  ${v.getDotPath(issue) ?? '(environment)'}: ${issue.message}`,
  );
  throw new ConfigError(`${what} configuration is invalid:\n${problems.join('\n')}`);
}

function serviceSettingsOf(env: ServiceEnv): ServiceSettings {
  const arn = env.ISR_UPSTREAM_SECRET_ARN;
  return {
    renderOriginUrl: env.RENDER_ORIGIN_URL,
    allowedQueryParams: env.ISR_ALLOWED_QUERY_PARAMS,
    renderPaths: env.ISR_RENDER_PATHS,
    keptHeaders: (env.ISR_KEPT_HEADERS ?? D.keptHeaders).map((header) => header.toLowerCase()),
    setCookie: env.ISR_SET_COOKIE as ServiceSettings['setCookie'],
    bodyKeyPrefix: env.ISR_BODY_PREFIX,
    cacheTagHeader: env.ISR_CACHE_TAG_HEADER ?? D.cacheTagHeader,
    upstreamTagHeader: env.ISR_UPSTREAM_TAG_HEADER ?? D.upstreamTagHeader,
    tenantHeader: env.ISR_TENANT_HEADER,
    tenants: env.ISR_TENANTS,
    deployId: env.ISR_DEPLOY_ID,
    revalidateSeconds: env.ISR_REVALIDATE_SECONDS,
    leaseSeconds: env.ISR_LEASE_SECONDS,
    clockSkewMarginSeconds: env.ISR_CLOCK_SKEW_MARGIN_SECONDS,
    renderTimeoutMs: env.ISR_RENDER_TIMEOUT_MS,
    maxBodyBytes: env.ISR_MAX_BODY_BYTES,
    metaTtlSeconds: env.ISR_META_TTL_SECONDS,
    goneTtlSeconds: env.ISR_GONE_TTL_SECONDS,
    keepVersions: env.ISR_KEEP_VERSIONS,
    upstreamSecret:
      arn === undefined
        ? undefined
        : { arn, header: env.ISR_UPSTREAM_SECRET_HEADER ?? D.upstreamSecretHeader },
  };
}

/** Applies `core/settings.ts`: the same rules `cdk synth` applied to the construct's props. */
function check(env: ServiceEnv, fn: FunctionCheck, what: string): void {
  const problems = settingsProblems(
    { service: serviceSettingsOf(env), functions: [fn], localMode: env.ISR_LOCAL_MODE === '1' },
    envName,
  );
  if (env.ISR_UPSTREAM_SECRET_HEADER !== undefined && env.ISR_UPSTREAM_SECRET_ARN === undefined) {
    problems.push('ISR_UPSTREAM_SECRET_HEADER needs ISR_UPSTREAM_SECRET_ARN');
  }
  if (problems.length === 0) return;
  throw new ConfigError(
    `${what} configuration is invalid:\n${problems.map((problem) => `  ${problem}`).join('\n')}`,
  );
}

function toServiceConfig(env: ServiceEnv) {
  const settings = serviceSettingsOf(env);
  return {
    tableName: env.FACETHEORY_CACHE_TABLE_NAME,
    bucket: env.ISR_BODY_BUCKET,
    keyPolicy: {
      allowedQueryParams: settings.allowedQueryParams,
      renderable:
        settings.renderPaths.length === 0 ? undefined : compilePathPatterns(settings.renderPaths),
    },
    /** The patterns behind `keyPolicy.renderable`, for tools that rebuild it (the ops CLI). */
    renderPaths: settings.renderPaths,
    tenantHeader: settings.tenantHeader,
    /** Tenants served in multi-tenant mode; undefined serves any well-formed tenant. */
    tenants: settings.tenants,
    deployId: settings.deployId,
    leaseSeconds: settings.leaseSeconds,
    clockSkewMarginSeconds: settings.clockSkewMarginSeconds,
    renderTimeoutMs: settings.renderTimeoutMs,
    defaultRevalidateSeconds: settings.revalidateSeconds,
    maxBodyBytes: settings.maxBodyBytes,
    headerPolicy: { keep: settings.keptHeaders, maxBytes: DEFAULT_KEPT_HEADERS_MAX_BYTES },
    setCookie: settings.setCookie,
    bodyKeyPrefix: settings.bodyKeyPrefix,
    cacheTagHeader: settings.cacheTagHeader,
    upstreamTagHeader: settings.upstreamTagHeader,
    retention: {
      idleSeconds: env.ISR_META_TTL_SECONDS,
      goneSeconds: env.ISR_GONE_TTL_SECONDS,
    },
    keepVersions: settings.keepVersions,
    renderOriginUrl: settings.renderOriginUrl,
    /** Where the upstream's shared secret lives and the header it goes in; never the value. */
    upstreamSecret: settings.upstreamSecret,
    functionTimeoutMs: env.ISR_FUNCTION_TIMEOUT_MS,
    localMode: env.ISR_LOCAL_MODE === '1',
    /** The function's name (the lease owner in LOCK rows); unset outside Lambda. */
    functionName: env.AWS_LAMBDA_FUNCTION_NAME,
  };
}

/** The overload fallback is a page the origin serves: a path like any a viewer requests. */
function fallbackPathOf(path: string | undefined): string | undefined {
  if (path === undefined || path.startsWith('/')) return path;
  throw new ConfigError(`ISR_OVERLOAD_FALLBACK_PATH must be a path starting with "/", got ${path}`);
}

export function loadWorkerConfig(env: Env = process.env) {
  const parsed = parse(WorkerEnv, env, 'worker');
  const worker = {
    maxReceiveCount: parsed.ISR_MAX_RECEIVE_COUNT,
    idempotencyTtlSeconds: parsed.ISR_IDEMPOTENCY_TTL_SECONDS,
  };
  check(
    parsed,
    { kind: 'worker', timeoutMs: parsed.ISR_FUNCTION_TIMEOUT_MS, settings: worker },
    'worker',
  );
  return { ...toServiceConfig(parsed), dlqUrl: parsed.ISR_DLQ_URL, ...worker };
}

export function loadOriginConfig(env: Env = process.env) {
  const parsed = parse(OriginEnv, env, 'origin');
  const origin = {
    dedupeWindowSeconds: parsed.ISR_DEDUPE_WINDOW_SECONDS,
    missWaitMs: parsed.ISR_MISS_WAIT_MS,
    retryAfterSeconds: parsed.ISR_RETRY_AFTER_SECONDS,
    staleSharedMaxAge: parsed.ISR_STALE_S_MAXAGE,
    staleWhileRevalidateSeconds: parsed.ISR_STALE_WHILE_REVALIDATE_SECONDS,
    staleIfErrorSeconds: parsed.ISR_STALE_IF_ERROR_SECONDS,
    missRenderLimit: parsed.ISR_MISS_RENDER_LIMIT,
  };
  check(
    parsed,
    { kind: 'origin', timeoutMs: parsed.ISR_FUNCTION_TIMEOUT_MS, settings: origin },
    'origin',
  );
  return {
    ...toServiceConfig(parsed),
    queueUrl: parsed.ISR_QUEUE_URL,
    overloadFallbackPath: fallbackPathOf(parsed.ISR_OVERLOAD_FALLBACK_PATH),
    ...origin,
  };
}

export function loadSweeperConfig(env: Env = process.env) {
  const parsed = parse(SweeperEnv, env, 'sweeper');
  const sweeper = {
    orphanAgeSeconds: parsed.ISR_ORPHAN_AGE_SECONDS,
    sweepPageLimit: parsed.ISR_SWEEP_PAGE_LIMIT,
    orphanListLimit: parsed.ISR_ORPHAN_LIST_LIMIT,
  };
  check(
    parsed,
    { kind: 'sweeper', timeoutMs: parsed.ISR_FUNCTION_TIMEOUT_MS, settings: sweeper },
    'sweeper',
  );
  return {
    ...toServiceConfig(parsed),
    ...sweeper,
    /** Whose pending purges each run submits again; unset: none to submit. */
    cdnDistributionId: cdnDistributionIdOf(env),
  };
}

/**
 * The revalidate function: the origin's cache-key and tenancy settings (a path is refused where
 * the origin would refuse it), the queue, and its own limits and webhook key.
 */
export function loadRevalidateConfig(env: Env = process.env) {
  const parsed = parse(RevalidateEnv, env, 'revalidate');
  const revalidate = {
    revalidateMaxPaths: parsed.ISR_REVALIDATE_MAX_PATHS,
    revalidateMaxTags: parsed.ISR_REVALIDATE_MAX_TAGS,
    revalidateSkewSeconds: parsed.ISR_REVALIDATE_SKEW_SECONDS,
    revalidateKeyTtlSeconds: parsed.ISR_REVALIDATE_KEY_TTL_SECONDS,
  };
  const secretArn = parsed.ISR_REVALIDATE_SECRET_ARN;
  if (secretArn !== undefined && !SECRET_ARN.test(secretArn)) {
    throw new ConfigError(
      'revalidate configuration is invalid:\n  ISR_REVALIDATE_SECRET_ARN must be a Secrets Manager secret ARN',
    );
  }
  check(
    parsed,
    { kind: 'revalidate', timeoutMs: parsed.ISR_FUNCTION_TIMEOUT_MS, settings: revalidate },
    'revalidate',
  );
  return {
    ...toServiceConfig(parsed),
    queueUrl: parsed.ISR_QUEUE_URL,
    /** The webhook key's secret ARN: HMAC mode when set. */
    revalidateSecretArn: secretArn,
    /** The CloudFront distribution purged by cache tag; unset: the receipt says `not-configured`. */
    cdnDistributionId: cdnDistributionIdOf(env),
    ...revalidate,
  };
}
