/**
 * Settings of one function or another: the resources the construct names, the upstream secret,
 * each function's own knobs, and what `npm start` alone reads. Entries without a prop (`env`)
 * keep their default when deployed; set them by hand locally.
 */
import { flag, header, int, text } from './define.js';
import { DISTRIBUTION_ID, SECRET_ARN, SQS_DEDUP_SECONDS } from './limits.js';
import { ALL } from './service-settings.js';
import { verbatimCodec, type Reader } from './spec.js';

export const url = (value: string, name: string): string[] => {
  try {
    new URL(value);
    return [];
  } catch {
    return [`${name} must be a URL, got ${JSON.stringify(value)}`];
  }
};
const minLength3 = (value: string, name: string): string[] =>
  value.length >= 3 ? [] : [`${name} must be at least 3 characters`];
const secretArn = (value: string, name: string): string[] =>
  SECRET_ARN.test(value) ? [] : [`${name} must be a Secrets Manager secret ARN`];

const RENDERERS: readonly Reader[] = ['origin', 'worker'];
/** The functions that purge the CDN by cache tag. */
const PURGERS: readonly Reader[] = ['revalidate', 'sweeper', 'purger'];
const WITH_PURGER: readonly Reader[] = [...ALL, 'purger'];
const LOCAL: readonly Reader[] = ['local'];

export const FUNCTION_SETTINGS = {
  /**
   * The cache table (FaceTheory's canonical variable).
   * @bounds at least 3 characters
   */
  tableName: text('FACETHEORY_CACHE_TABLE_NAME', 'ref', WITH_PURGER, undefined, {
    required: true,
    local: 'isr-cache',
    check: minLength3,
  }),
  /**
   * The body bucket.
   * @bounds at least 3 characters
   */
  bodyBucket: text('ISR_BODY_BUCKET', 'ref', ALL, undefined, {
    required: true,
    local: 'isr-bodies',
    check: minLength3,
  }),
  /**
   * The regeneration queue (FIFO): the origin queues stale pages, `regenerate: true` too; a
   * revalidation's fan-out steps go there too (the worker queues the next, the sweeper resends).
   * @bounds a URL
   */
  queueUrl: text('ISR_QUEUE_URL', 'ref', ['origin', 'revalidate', 'worker', 'sweeper'], undefined, {
    required: true,
    check: url,
  }),
  /**
   * The dead-letter queue, where the worker sends a message it gives up on, with the reason.
   * @bounds a URL
   */
  dlqUrl: text('ISR_DLQ_URL', 'ref', ['worker'], undefined, { required: true, check: url }),
  /**
   * The CloudFront distribution purged by cache tag; unset: receipts say `not-configured`.
   * @bounds upper-case letters and digits
   */
  cdnDistributionId: text('ISR_CDN_DISTRIBUTION_ID', 'ref', PURGERS, undefined, {
    check: (id, name) =>
      DISTRIBUTION_ID.test(id) ? [] : [`${name} is not a CloudFront distribution id: ${id}`],
  }),
  /**
   * This function's own timeout, so the timeout rule holds at cold start too.
   * @bounds and room for a render and its publish (origin, worker)
   */
  functionTimeoutMs: int('ISR_FUNCTION_TIMEOUT_MS', 'ref', WITH_PURGER, undefined, 1_000, 900_000, {
    prop: '<function>Timeout',
  }),
  /**
   * The upstream's shared secret (its ARN, never the value): origin and worker only.
   * @bounds a Secrets Manager secret ARN
   */
  upstreamSecretArn: text('ISR_UPSTREAM_SECRET_ARN', 'ref', RENDERERS, undefined, {
    prop: 'upstreamSecret',
    check: secretArn,
    requires: { renderOriginUrl: '' },
  }),
  /**
   * Header the upstream secret is sent in.
   * @default 'x-isr-origin-secret'
   * @bounds not the tenant header
   */
  upstreamSecretHeader: header(
    'ISR_UPSTREAM_SECRET_HEADER',
    'prop',
    RENDERERS,
    'x-isr-origin-secret',
    {
      requires: { upstreamSecretArn: '' },
    },
  ),
  /**
   * The revalidation webhook's HMAC key (its ARN): HMAC mode when set, else SigV4.
   * @bounds a Secrets Manager secret ARN
   */
  revalidateSecretArn: text('ISR_REVALIDATE_SECRET_ARN', 'ref', ['revalidate'], undefined, {
    prop: 'revalidateWebhookSecret',
    check: secretArn,
  }),
  /**
   * `1` allows a plain-http upstream on any host (a development machine).
   * @bounds `0` or `1`
   */
  localMode: flag('ISR_LOCAL_MODE', 'env', ALL, false),
  /** Set by the Lambda runtime; names the lease owner in LOCK rows. */
  functionName: text('AWS_LAMBDA_FUNCTION_NAME', 'env', WITH_PURGER, undefined),

  /**
   * Renders inside viewer requests (MISSes) at once, across every origin instance; past it a
   * viewer gets 503 + Retry-After (or `overloadFallbackPath`) at once. `0` turns the cap off.
   * Keep it below `originReservedConcurrency` when you set one, so HITs are still served during
   * a flood.
   * @default 25
   */
  missRenderLimit: int('ISR_MISS_RENDER_LIMIT', 'prop', ['origin', 'deploy'], 25, 0, undefined, {
    why: '0 turns the cap off',
  }),
  /**
   * Regenerations a minute per site (per tenant in multi-tenant mode), across every worker: past
   * it stale pages are still served (`Cache-Status: …; detail=budget`) and their intents wait,
   * one per page, for a later minute. Counted in the cache table (1 WCU a regeneration).
   * @default - unlimited
   */
  regenerationBudget: int(
    'ISR_REGENERATION_BUDGET',
    'prop',
    ['origin', 'worker', 'sweeper', 'deploy'],
    undefined,
    1,
    undefined,
    { why: '0 or less would stop every regeneration; leave it unset for no cap' },
  ),
  /**
   * A cached page served, as a 503 nobody caches, when the MISS cap is reached (e.g. `/busy`).
   * @default - a plain 503 with Retry-After
   * @bounds a path starting with `/`
   */
  overloadFallbackPath: text('ISR_OVERLOAD_FALLBACK_PATH', 'prop', ['origin'], undefined, {
    check: (path, name) =>
      path.startsWith('/') ? [] : [`${name} must be a path starting with "/", got ${path}`],
  }),
  /** A stale generation can be queued again after this window (SQS dedupes for 5 minutes). */
  dedupeWindowSeconds: int(
    'ISR_DEDUPE_WINDOW_SECONDS',
    'env',
    ['origin'],
    30,
    1,
    SQS_DEDUP_SECONDS - 1,
    {
      why: 'SQS dedupe lasts 5 minutes',
      local: 5,
    },
  ),
  /** How long a MISS waits for another holder's render before answering 503. */
  missWaitMs: int('ISR_MISS_WAIT_MS', 'env', ['origin'], 5_000, 0),
  /**
   * How long the upstream has to answer a pass-through (a request the cache does not answer),
   * body included; apart from the render timeout. Past it the viewer gets a 504.
   * @default 30_000
   */
  passTimeoutMs: int('ISR_PASS_TIMEOUT_MS', 'env', ['origin', 'local'], 30_000, 1, 900_000),
  /**
   * Largest request body a pass-through forwards (a form, a Server Action); past it a 413.
   * At most 4 MiB: a function URL takes 6 MB of base64.
   * @default 1_048_576 (1 MiB)
   */
  passBodyMaxBytes: int(
    'ISR_PASS_BODY_MAX_BYTES',
    'env',
    ['origin', 'local'],
    1_048_576,
    0,
    4_194_304,
    {
      why: 'base64 must fit a 6 MB function URL request',
    },
  ),
  /**
   * How long a key whose answer was not to be stored is remembered as pass (hit-for-pass): its
   * requests go to the upstream at once, with no lease, render or write. 0 turns it off.
   * @default 300
   */
  hitForPassSeconds: int('ISR_HIT_FOR_PASS_SECONDS', 'env', ['origin', 'worker'], 300, 0, 86_400),
  /**
   * Most variants one page keeps (`variantHeaders`, `keyRules`): a request for a new variant of
   * a page that has this many is passed to the upstream, not stored. Counted on a MISS only.
   * @default 16
   */
  maxVariantsPerPage: int('ISR_MAX_VARIANTS_PER_PAGE', 'env', ['origin'], 16, 1, 1000),
  /** Retry-After of a 503. */
  retryAfterSeconds: int('ISR_RETRY_AFTER_SECONDS', 'env', ['origin'], 2, 1),
  /** Shared-cache lifetime of a stale answer: short, so the regenerated page is picked up soon. */
  staleSharedMaxAge: int('ISR_STALE_S_MAXAGE', 'env', ['origin'], 2, 0),
  /** `stale-while-revalidate` of every page answer. */
  staleWhileRevalidateSeconds: int('ISR_STALE_WHILE_REVALIDATE_SECONDS', 'env', ['origin'], 60, 0),
  /** `stale-if-error` of every page answer. */
  staleIfErrorSeconds: int('ISR_STALE_IF_ERROR_SECONDS', 'env', ['origin'], 86_400, 0),

  /**
   * Receives before SQS moves a message to the DLQ (at least 5 deployed), on the regeneration
   * queue and the purge queue; the worker and the purger are told the same, so their last
   * attempt dead-letters with a reason.
   * @default 5
   */
  maxReceiveCount: int(
    'ISR_MAX_RECEIVE_COUNT',
    'prop',
    ['worker', 'purger', 'local', 'deploy'],
    5,
    1,
    1000,
  ),
  /** How long a regeneration's REQ# row is remembered. */
  idempotencyTtlSeconds: int('ISR_IDEMPOTENCY_TTL_SECONDS', 'env', ['worker'], 86_400, 1),

  /**
   * The sweeper retires a body nothing points to only once it is older than this: more than the
   * lease plus the longest function timeout (900 s), so the render that wrote it cannot still
   * publish it.
   * @default 3_600 (1 hour)
   * @bounds and more than the lease plus 900 s
   */
  orphanAgeSeconds: int('ISR_ORPHAN_AGE_SECONDS', 'prop', ['sweeper'], 3_600, 1),
  /** Status-index rows read per shard per sweep: bounds a run's read units. */
  sweepPageLimit: int('ISR_SWEEP_PAGE_LIMIT', 'env', ['sweeper'], 100, 1, 1000),
  /** Bodies listed per sweep (one ListObjectsV2 page); a cursor carries on from there. */
  orphanListLimit: int('ISR_ORPHAN_LIST_LIMIT', 'env', ['sweeper'], 500, 1, 1000, {
    why: 'one ListObjectsV2 page holds at most 1000 keys',
  }),

  /** Paths one revalidation request may name (more is a 413). */
  revalidateMaxPaths: int('ISR_REVALIDATE_MAX_PATHS', 'env', ['revalidate'], 100, 1, 1000, {
    why: 'one request is applied within one invocation',
  }),
  /** Tags one revalidation request may name (more is a 413). */
  revalidateMaxTags: int('ISR_REVALIDATE_MAX_TAGS', 'env', ['revalidate'], 100, 1, 1000, {
    why: 'one request is applied within one invocation',
  }),
  /** How far a webhook's `x-isr-timestamp` may be from the receiver's clock, either way. */
  revalidateSkewSeconds: int('ISR_REVALIDATE_SKEW_SECONDS', 'env', ['revalidate'], 300, 1, 3600, {
    why: 'a wider window lets a captured webhook replay',
  }),
  /**
   * Shards of the in-progress revalidation rows (one partition each, each holding every entry):
   * an origin container reads one, picked when it starts, so no single item serves every
   * request. Same value for every function.
   */
  revalidationShards: int(
    'ISR_REVALIDATION_SHARDS',
    'env',
    ['origin', 'revalidate', 'worker'],
    4,
    1,
    64,
    { why: 'each revalidated tag is written to every shard before the 202' },
  ),
  /**
   * How long an origin container reuses its read of the in-progress rows (from when the read
   * started); the revalidate function waits as long before its 202.
   */
  inProgressCacheMs: int(
    'ISR_IN_PROGRESS_CACHE_MS',
    'env',
    ['origin', 'revalidate'],
    250,
    0,
    5_000,
    {
      why: 'the 202 waits this long',
    },
  ),
  /**
   * Tag-index rows one background fan-out step marks. Each step is one queue hop, so larger
   * steps mark a big tag faster; 500 at `fanOutConcurrency` 32 is ~16 rounds of UpdateItems.
   */
  fanOutBatchSize: int('ISR_FAN_OUT_BATCH_SIZE', 'env', ['revalidate', 'worker'], 500, 1, 1_000, {
    why: 'one step runs within one worker invocation (and one Query page)',
  }),
  /** Pages one fan-out step (or the revalidate function, for `paths`) marks at once. */
  fanOutConcurrency: int('ISR_FAN_OUT_CONCURRENCY', 'env', ['revalidate', 'worker'], 32, 1, 128, {
    why: 'each is one UpdateItem in flight from one function',
  }),
  /** A fan-out not advanced for this long is resent by the sweeper from its stored cursor. */
  fanOutStalledSeconds: int('ISR_FAN_OUT_STALLED_SECONDS', 'env', ['sweeper'], 300, 60, 86_400),
  /** How long a revalidation's Idempotency-Key is remembered: webhook providers retry for days. */
  revalidateKeyTtlSeconds: int(
    'ISR_REVALIDATE_KEY_TTL_SECONDS',
    'env',
    ['revalidate'],
    7 * 86_400,
    60,
  ),

  /** Where `npm start` listens. */
  port: int('PORT', 'env', LOCAL, 3000, 1, 65_535),
  /**
   * The address `npm start` listens on (`0.0.0.0` opens it to the LAN).
   * @bounds an IP address
   */
  localBindAddress: text('ISR_LOCAL_BIND_ADDRESS', 'env', LOCAL, '127.0.0.1', {
    check: (address, name) =>
      isIpAddress(address) ? [] : [`${name} must be an IP address, got "${address}"`],
  }),
  /** Where DynamoDB Local and s3rver keep their data (the ops CLI finds it there too). */
  localDataDir: text('ISR_LOCAL_DATA_DIR', 'env', LOCAL, '.local'),
  /**
   * Whether `npm start`'s CloudFront keeps answers as the deployed one would (`1`); `0` routes
   * and answers every request at the origin, to watch the origin alone.
   */
  localEdgeCache: flag('ISR_LOCAL_EDGE_CACHE', 'env', LOCAL, true),
  /** The HMAC secret itself (local only) `POST /_isr/revalidate` requires; unset: open on loopback. */
  revalidateSecret: {
    ...text('ISR_REVALIDATE_SECRET', 'env', LOCAL, undefined),
    codec: verbatimCodec,
  },
};

/** An IPv4 dotted quad, or an IPv6 address a URL accepts. */
function isIpAddress(address: string): boolean {
  if (/^(\d{1,3})(\.\d{1,3}){3}$/.test(address)) {
    return address.split('.').every((part) => Number(part) <= 255);
  }
  if (!address.includes(':')) return false;
  try {
    return new URL(`http://[${address}]/`).hostname !== '';
  } catch {
    return false;
  }
}
