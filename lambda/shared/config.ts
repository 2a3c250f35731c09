/**
 * Every environment variable the service reads, validated once at cold start. A bad or missing
 * value fails with a message naming the variable; nothing else reads `process.env`.
 */
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { compilePathPatterns } from '../core/path-patterns.js';
import { DEFAULT_RETENTION } from '../core/regenerate.js';

const int = (fallback: number, min = 1) => z.coerce.number().int().min(min).default(fallback);
const list = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  );
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value?.trim() ? value.trim() : undefined));

const ServiceEnv = z.object({
  /** Canonical FaceTheory name of the cache table. */
  FACETHEORY_CACHE_TABLE_NAME: z.string().min(3),
  ISR_BODY_BUCKET: z.string().min(3),
  /** Query parameters that are part of the cache key, comma-separated. */
  ISR_ALLOWED_QUERY_PARAMS: list,
  /** Path patterns that may be rendered at all, comma-separated (`/blog/*`, `/docs/**`); unset: all. */
  ISR_RENDER_PATHS: list,
  /** When set, multi-tenant mode: the tenant comes from this request header. */
  ISR_TENANT_HEADER: optionalText.transform((value) => value?.toLowerCase()),
  /** Bump when rendering behaviour changes, so old intents never collide with new ones. */
  ISR_DEPLOY_ID: z.string().min(1).max(128).default('unversioned'),
  ISR_LEASE_SECONDS: int(30, 2),
  /** Largest clock difference between two workers; a render starts only with more lease left. */
  ISR_CLOCK_SKEW_MARGIN_SECONDS: int(2, 0),
  ISR_RENDER_TIMEOUT_MS: int(10_000),
  /** Freshness of a page that does not ask for its own. */
  ISR_REVALIDATE_SECONDS: int(60),
  ISR_MAX_BODY_BYTES: int(5 * 1024 * 1024),
  /** How long a stale page nobody asks for is kept before DynamoDB TTL may collect it. */
  ISR_META_TTL_SECONDS: z.coerce.number().int().positive().optional(),
  /** The same for a 404/410 page. */
  ISR_GONE_TTL_SECONDS: int(DEFAULT_RETENTION.goneSeconds),
  /** Upstream SSR origin; the demo renderer is used when unset. */
  RENDER_ORIGIN_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
});

const WorkerEnv = ServiceEnv.extend({
  ISR_DLQ_URL: z.url(),
  /** Receives after which a retryable failure is dead-lettered (match the queue's redrive). */
  ISR_MAX_RECEIVE_COUNT: int(5),
  ISR_IDEMPOTENCY_TTL_SECONDS: int(86_400),
});

const OriginEnv = ServiceEnv.extend({
  ISR_QUEUE_URL: z.url(),
  /** FIFO message groups regeneration intents are spread over. */
  ISR_MESSAGE_GROUPS: int(64),
  /** A stale generation can be re-enqueued after this window (SQS dedupes for 5 minutes). */
  ISR_DEDUPE_WINDOW_SECONDS: int(30).refine(
    (value) => value < 300,
    'must be under 300 (SQS dedupe lasts 5 minutes)',
  ),
  /** How long a miss waits for another holder's render before answering 503. */
  ISR_MISS_WAIT_MS: int(5_000, 0),
  ISR_RETRY_AFTER_SECONDS: int(2),
  /** Shared-cache lifetime of a stale response: short, so the regenerated page is picked up soon. */
  ISR_STALE_S_MAXAGE: int(2, 0),
  ISR_STALE_WHILE_REVALIDATE_SECONDS: int(60, 0),
  ISR_STALE_IF_ERROR_SECONDS: int(86_400, 0),
  /** Renders inside viewer requests at once, across every origin instance; 0 turns the cap off. */
  ISR_MISS_RENDER_LIMIT: int(25, 0),
  /** A cached page served (as a 503) when the cap is reached, e.g. `/busy`. */
  ISR_OVERLOAD_FALLBACK_PATH: optionalText,
});

export type ServiceConfig = ReturnType<typeof toServiceConfig>;
export type WorkerConfig = ReturnType<typeof loadWorkerConfig>;
export type OriginConfig = ReturnType<typeof loadOriginConfig>;

type Env = Record<string, string | undefined>;

function parse<T extends z.ZodType>(schema: T, env: Env, what: string): z.output<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map(
    (issue) => `  ${issue.path.join('.')}: ${issue.message}`,
  );
  throw new ConfigError(`${what} configuration is invalid:\n${problems.join('\n')}`);
}

function renderableOf(patterns: readonly string[]) {
  if (patterns.length === 0) return undefined;
  try {
    return compilePathPatterns(patterns);
  } catch (error) {
    throw new ConfigError(`ISR_RENDER_PATHS: ${(error as Error).message}`);
  }
}

function toServiceConfig(env: z.output<typeof ServiceEnv>) {
  if (env.ISR_CLOCK_SKEW_MARGIN_SECONDS >= env.ISR_LEASE_SECONDS) {
    throw new ConfigError(
      `ISR_CLOCK_SKEW_MARGIN_SECONDS (${env.ISR_CLOCK_SKEW_MARGIN_SECONDS}) must be below the lease (ISR_LEASE_SECONDS=${env.ISR_LEASE_SECONDS})`,
    );
  }
  if (env.ISR_RENDER_TIMEOUT_MS >= env.ISR_LEASE_SECONDS * 1000) {
    throw new ConfigError(
      `ISR_RENDER_TIMEOUT_MS (${env.ISR_RENDER_TIMEOUT_MS}) must be below the lease (ISR_LEASE_SECONDS=${env.ISR_LEASE_SECONDS})`,
    );
  }
  return {
    tableName: env.FACETHEORY_CACHE_TABLE_NAME,
    bucket: env.ISR_BODY_BUCKET,
    keyPolicy: {
      allowedQueryParams: env.ISR_ALLOWED_QUERY_PARAMS,
      renderable: renderableOf(env.ISR_RENDER_PATHS),
    },
    tenantHeader: env.ISR_TENANT_HEADER,
    deployId: env.ISR_DEPLOY_ID,
    leaseSeconds: env.ISR_LEASE_SECONDS,
    clockSkewMarginSeconds: env.ISR_CLOCK_SKEW_MARGIN_SECONDS,
    renderTimeoutMs: env.ISR_RENDER_TIMEOUT_MS,
    defaultRevalidateSeconds: env.ISR_REVALIDATE_SECONDS,
    maxBodyBytes: env.ISR_MAX_BODY_BYTES,
    retention: {
      idleSeconds: env.ISR_META_TTL_SECONDS ?? DEFAULT_RETENTION.idleSeconds,
      goneSeconds: env.ISR_GONE_TTL_SECONDS,
    },
    renderOriginUrl: env.RENDER_ORIGIN_URL,
  };
}

export function loadWorkerConfig(env: Env = process.env) {
  const parsed = parse(WorkerEnv, env, 'worker');
  return {
    ...toServiceConfig(parsed),
    dlqUrl: parsed.ISR_DLQ_URL,
    maxReceiveCount: parsed.ISR_MAX_RECEIVE_COUNT,
    idempotencyTtlSeconds: parsed.ISR_IDEMPOTENCY_TTL_SECONDS,
  };
}

export function loadOriginConfig(env: Env = process.env) {
  const parsed = parse(OriginEnv, env, 'origin');
  return {
    ...toServiceConfig(parsed),
    queueUrl: parsed.ISR_QUEUE_URL,
    messageGroups: parsed.ISR_MESSAGE_GROUPS,
    dedupeWindowSeconds: parsed.ISR_DEDUPE_WINDOW_SECONDS,
    missWaitMs: parsed.ISR_MISS_WAIT_MS,
    retryAfterSeconds: parsed.ISR_RETRY_AFTER_SECONDS,
    staleSharedMaxAge: parsed.ISR_STALE_S_MAXAGE,
    staleWhileRevalidateSeconds: parsed.ISR_STALE_WHILE_REVALIDATE_SECONDS,
    staleIfErrorSeconds: parsed.ISR_STALE_IF_ERROR_SECONDS,
    missRenderLimit: parsed.ISR_MISS_RENDER_LIMIT,
    overloadFallbackPath: parsed.ISR_OVERLOAD_FALLBACK_PATH,
  };
}
