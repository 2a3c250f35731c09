/**
 * The one source of truth for the service's settings: defaults, bounds and every cross-field
 * rule. `lib/isr-settings.ts` applies it at `cdk synth` and `lambda/shared/config.ts` at cold
 * start, so synth refuses exactly what a cold start would. Pure (no AWS CDK, no zod, no I/O), so
 * it costs a Lambda bundle next to nothing.
 */
import { compilePathPatterns } from './path-patterns.js';
import { DEFAULT_KEPT_HEADERS, KEPT_HEADER_PATTERN, SetCookiePolicy } from './response-headers.js';
import { BODY_KEY_PREFIX, TENANT_PATTERN } from './rows.js';

/**
 * A function URL answers with at most 6 MB and the origin base64-encodes binary bodies (4/3),
 * so 4 MiB is the largest body that always fits a response.
 */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Time a render needs after it returns: body PutObject, the publish transaction, tagging. */
export const PUBLISH_MARGIN_MS = 5_000;
/** Lambda's longest function timeout. */
export const MAX_FUNCTION_TIMEOUT_MS = 900_000;
/** How long SQS remembers a FIFO deduplication ID; a dedupe window must stay below it. */
export const SQS_DEDUP_SECONDS = 300;
/** Most versions of a page META lists (each sk is ~50 bytes, read on every request). */
export const MAX_KEPT_VERSIONS = 20;
/** Longest freshness a page may ask for (the renderer's cap too). */
export const MAX_REVALIDATE_SECONDS = 365 * 24 * 3600;

/** Every default, in the units the Lambdas read them. */
export const SETTING_DEFAULTS = {
  deployId: 'unversioned',
  revalidateSeconds: 60,
  leaseSeconds: 30,
  clockSkewMarginSeconds: 2,
  renderTimeoutMs: 10_000,
  maxBodyBytes: MAX_BODY_BYTES,
  functionTimeoutMs: 30_000,
  upstreamSecretHeader: 'x-isr-origin-secret',
  maxReceiveCount: 5,
  idempotencyTtlSeconds: 86_400,
  /** A stale page nobody asks for is kept this long (DynamoDB TTL), a 404/410 page this long. */
  metaTtlSeconds: 7 * 86_400,
  goneTtlSeconds: 3_600,
  /** Versions of a page kept for rollback (Recipe B), the live one included. */
  keepVersions: 5,
  dedupeWindowSeconds: 30,
  missRenderLimit: 25,
  keptHeaders: DEFAULT_KEPT_HEADERS,
  bodyKeyPrefix: BODY_KEY_PREFIX,
  /** The header the origin lists a page's CDN cache tags in (CloudFront's CacheTagConfig). */
  cacheTagHeader: 'x-isr-cache-tags',
  /** The upstream response header a page's tags come from. */
  upstreamTagHeader: 'cache-tag',
  setCookie: SetCookiePolicy.Strip,
  missWaitMs: 5_000,
  retryAfterSeconds: 2,
  staleSharedMaxAge: 2,
  staleWhileRevalidateSeconds: 60,
  staleIfErrorSeconds: 86_400,
  /** A body is retired only this long after it was written (> lease + longest function timeout). */
  orphanAgeSeconds: 3_600,
  /** Rows read per status-index shard per sweep: bounds a run's read units. */
  sweepPageLimit: 100,
  /** Bodies listed per sweep (one ListObjectsV2 page); a cursor carries on from there. */
  orphanListLimit: 500,
  /** Paths and tags one revalidation request may name (more is a 413). */
  revalidateMaxPaths: 100,
  revalidateMaxTags: 100,
  /** How far a webhook's `x-isr-timestamp` may be from the receiver's clock, either way. */
  revalidateSkewSeconds: 300,
  /** How long a revalidation's Idempotency-Key is remembered: webhook providers retry for days. */
  revalidateKeyTtlSeconds: 7 * 86_400,
} as const;

/** The upstream's shared secret: which Secrets Manager secret, sent in which request header. */
export interface UpstreamSecret {
  readonly arn: string;
  readonly header: string;
}

/** What both functions read. */
export interface ServiceSettings {
  readonly renderOriginUrl: string | undefined;
  readonly allowedQueryParams: readonly string[];
  readonly tenantHeader: string | undefined;
  readonly tenants: readonly string[] | undefined;
  readonly deployId: string;
  readonly revalidateSeconds: number;
  readonly leaseSeconds: number;
  readonly clockSkewMarginSeconds: number;
  readonly renderTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly metaTtlSeconds: number | undefined;
  readonly goneTtlSeconds: number | undefined;
  /** Versions of a page kept (VER# rows and their bodies), the live one included. */
  readonly keepVersions: number;
  /** Path patterns that may be rendered (`core/path-patterns.ts`); empty allows every path. */
  readonly renderPaths: readonly string[];
  /** Upstream response headers kept with a page (`core/response-headers.ts`). */
  readonly keptHeaders: readonly string[];
  /** What happens to a page that sets a cookie. */
  readonly setCookie: SetCookiePolicy;
  /** Where bodies are written (and may be read, IAM-wise): another writer's prefix works too. */
  readonly bodyKeyPrefix: string;
  /** The header the origin lists a page's cache tags in, for the CDN. */
  readonly cacheTagHeader: string;
  /** The upstream response header a page's tags come from. */
  readonly upstreamTagHeader: string;
  readonly upstreamSecret: UpstreamSecret | undefined;
}

/** What only the origin reads. */
export interface OriginSettings {
  readonly dedupeWindowSeconds: number;
  readonly missRenderLimit: number;
  readonly missWaitMs: number;
  readonly retryAfterSeconds: number;
  readonly staleSharedMaxAge: number;
  readonly staleWhileRevalidateSeconds: number;
  readonly staleIfErrorSeconds: number;
}

/** What only the worker reads. */
export interface WorkerSettings {
  readonly maxReceiveCount: number;
  readonly idempotencyTtlSeconds: number;
}

/** What only the sweeper reads. */
export interface SweeperSettings {
  readonly orphanAgeSeconds: number;
  readonly sweepPageLimit: number;
  readonly orphanListLimit: number;
}

/** What only the revalidate function reads. */
export interface RevalidateSettings {
  readonly revalidateMaxPaths: number;
  readonly revalidateMaxTags: number;
  readonly revalidateSkewSeconds: number;
  readonly revalidateKeyTtlSeconds: number;
}

export type FunctionKind = 'origin' | 'worker' | 'sweeper' | 'revalidate';

type IntegerKey =
  | 'revalidateSeconds'
  | 'leaseSeconds'
  | 'clockSkewMarginSeconds'
  | 'renderTimeoutMs'
  | 'maxBodyBytes'
  | 'metaTtlSeconds'
  | 'goneTtlSeconds'
  | 'keepVersions'
  | 'functionTimeoutMs'
  | keyof OriginSettings
  | keyof WorkerSettings
  | keyof SweeperSettings
  | keyof RevalidateSettings;

export type SettingKey =
  keyof ServiceSettings | IntegerKey | 'upstreamSecretArn' | 'upstreamSecretHeader' | 'localMode';

/** How the caller names a setting in messages: a construct prop or an environment variable. */
export type NameOf = (key: SettingKey, kind?: FunctionKind) => string;

interface Bound {
  readonly min: number;
  readonly max: number;
  /** Why the bound is there, when it is not obvious. */
  readonly why?: string;
}

const ANY = Number.MAX_SAFE_INTEGER;

/** Inclusive integer bounds of every numeric setting. */
export const INTEGER_BOUNDS: Readonly<Record<IntegerKey, Bound>> = {
  revalidateSeconds: { min: 1, max: MAX_REVALIDATE_SECONDS },
  leaseSeconds: { min: 2, max: ANY },
  clockSkewMarginSeconds: { min: 0, max: ANY },
  renderTimeoutMs: { min: 1, max: MAX_FUNCTION_TIMEOUT_MS },
  maxBodyBytes: { min: 1, max: MAX_BODY_BYTES, why: 'base64 must fit a 6 MB function URL reply' },
  metaTtlSeconds: { min: 1, max: ANY },
  goneTtlSeconds: { min: 1, max: ANY },
  keepVersions: {
    min: 2,
    max: MAX_KEPT_VERSIONS,
    why: 'the page before the live one is always kept; META lists every kept version',
  },
  functionTimeoutMs: { min: 1_000, max: MAX_FUNCTION_TIMEOUT_MS },
  maxReceiveCount: { min: 1, max: 1000 },
  idempotencyTtlSeconds: { min: 1, max: ANY },
  missRenderLimit: { min: 0, max: ANY, why: '0 turns the cap off' },
  dedupeWindowSeconds: { min: 1, max: SQS_DEDUP_SECONDS - 1, why: 'SQS dedupe lasts 5 minutes' },
  missWaitMs: { min: 0, max: ANY },
  retryAfterSeconds: { min: 1, max: ANY },
  staleSharedMaxAge: { min: 0, max: ANY },
  staleWhileRevalidateSeconds: { min: 0, max: ANY },
  staleIfErrorSeconds: { min: 0, max: ANY },
  orphanAgeSeconds: { min: 1, max: ANY },
  sweepPageLimit: { min: 1, max: 1000 },
  orphanListLimit: { min: 1, max: 1000, why: 'one ListObjectsV2 page holds at most 1000 keys' },
  revalidateMaxPaths: { min: 1, max: 1000, why: 'one request is applied within one invocation' },
  revalidateMaxTags: { min: 1, max: 1000, why: 'one request is applied within one invocation' },
  revalidateSkewSeconds: {
    min: 1,
    max: 3600,
    why: 'a wider window lets a captured webhook replay',
  },
  revalidateKeyTtlSeconds: { min: 60, max: ANY },
};

interface OwnCheck<K extends FunctionKind, S> {
  readonly kind: K;
  readonly timeoutMs: number | undefined;
  readonly settings: S;
}
/** One function's own settings and timeout, as the function itself sees them. */
export type FunctionCheck =
  | OwnCheck<'origin', OriginSettings>
  | OwnCheck<'worker', WorkerSettings>
  | OwnCheck<'sweeper', SweeperSettings>
  | OwnCheck<'revalidate', RevalidateSettings>;

export interface SettingsCheck {
  readonly service: ServiceSettings;
  /** The functions to check; a function's timeout is checked when it is known. */
  readonly functions: readonly FunctionCheck[];
  /** Local mode (`npm start`): a plain-http upstream is allowed on any host. */
  readonly localMode: boolean;
  /** Text known only at deploy (a CDK token): skipped here, checked at cold start. */
  readonly isDeployTime?: (text: string) => boolean;
}

/**
 * Every problem of a combination of settings, named as the caller names them; empty when the
 * service can run with it. Bounds are checked first; a cross-field rule only between valid values.
 */
export function settingsProblems(check: SettingsCheck, nameOf: NameOf): string[] {
  const { service } = check;
  const deployTime = check.isDeployTime ?? (() => false);
  const problems: string[] = [];
  const integer = (key: IntegerKey, value: number | undefined, kind?: FunctionKind): boolean => {
    if (value === undefined) return true;
    const problem = boundProblem(nameOf(key, kind), value, INTEGER_BOUNDS[key]);
    if (problem !== undefined) problems.push(problem);
    return problem === undefined;
  };

  const lease = integer('leaseSeconds', service.leaseSeconds);
  const skew = integer('clockSkewMarginSeconds', service.clockSkewMarginSeconds);
  const render = integer('renderTimeoutMs', service.renderTimeoutMs);
  integer('revalidateSeconds', service.revalidateSeconds);
  integer('maxBodyBytes', service.maxBodyBytes);
  integer('metaTtlSeconds', service.metaTtlSeconds);
  integer('goneTtlSeconds', service.goneTtlSeconds);
  integer('keepVersions', service.keepVersions);
  if (lease && skew) problems.push(...skewProblems(service, nameOf));
  if (lease && render) problems.push(...renderProblems(service, nameOf));

  for (const fn of check.functions) {
    const own = Object.entries(fn.settings) as [IntegerKey, number][];
    const ownValid = own.map(([key, value]) => integer(key, value, fn.kind)).every(Boolean);
    const timeout = integer('functionTimeoutMs', fn.timeoutMs, fn.kind);
    if (fn.kind === 'sweeper') {
      if (lease && ownValid) problems.push(...orphanAgeProblems(fn.settings, service, nameOf));
    } else if (timeout && render && ownValid && fn.timeoutMs !== undefined) {
      problems.push(...timeoutProblems(fn, fn.timeoutMs, service, nameOf));
    }
  }

  problems.push(
    ...textProblems(service, nameOf, deployTime),
    ...renderOriginUrlProblems(service, check.localMode, nameOf, deployTime),
    ...tenantProblems(service, nameOf, deployTime),
    ...renderPathProblems(service, nameOf, deployTime),
    ...keptHeaderProblems(service, nameOf, deployTime),
    ...bodyKeyPrefixProblems(service, nameOf, deployTime),
    ...upstreamSecretProblems(service, nameOf, deployTime),
  );
  return problems;
}

function boundProblem(name: string, value: number, bound: Bound): string | undefined {
  if (Number.isInteger(value) && value >= bound.min && value <= bound.max) return undefined;
  const range = bound.max === ANY ? `>= ${bound.min}` : `${bound.min}..${bound.max}`;
  const why = bound.why === undefined ? '' : ` (${bound.why})`;
  return `${name} must be an integer ${range}${why}, got ${value}`;
}

/** A render only starts with more than the margin left on the lease, so some must remain. */
function skewProblems(service: ServiceSettings, nameOf: NameOf): string[] {
  const { clockSkewMarginSeconds: skew, leaseSeconds: lease } = service;
  if (skew < lease) return [];
  return [
    `${nameOf('clockSkewMarginSeconds')} (${skew} s) must be below the lease ` +
      `(${nameOf('leaseSeconds')}=${lease}): no lease would be left to render in`,
  ];
}

/** The lease must outlive the render, so a render cannot run past its lease unnoticed. */
function renderProblems(service: ServiceSettings, nameOf: NameOf): string[] {
  const { renderTimeoutMs: render, leaseSeconds: lease } = service;
  if (render < lease * 1000) return [];
  return [
    `${nameOf('renderTimeoutMs')} (${render} ms) must be below the lease ` +
      `(${nameOf('leaseSeconds')}=${lease}, ${lease * 1000} ms): the lease must be longer than the render`,
  ];
}

/**
 * A body younger than a lease plus the longest function run may still be published by the
 * render that wrote it (it holds, or may refresh, its lease): the sweeper must never retire it.
 */
function orphanAgeProblems(
  sweeper: SweeperSettings,
  service: ServiceSettings,
  nameOf: NameOf,
): string[] {
  const needed = service.leaseSeconds + MAX_FUNCTION_TIMEOUT_MS / 1000;
  if (sweeper.orphanAgeSeconds > needed) return [];
  return [
    `${nameOf('orphanAgeSeconds', 'sweeper')} (${sweeper.orphanAgeSeconds} s) must exceed the lease ` +
      `(${nameOf('leaseSeconds')}) plus the longest function timeout (900 s): ${needed} s`,
  ];
}

/**
 * A function's timeout must leave room for the longest thing it does plus the publish margin:
 * the worker a render, the origin a render in the request or a wait for another holder's publish.
 */
function timeoutProblems(
  fn: FunctionCheck,
  timeoutMs: number,
  service: ServiceSettings,
  nameOf: NameOf,
): string[] {
  // The revalidate function never renders: only its own bounds apply.
  if (fn.kind === 'revalidate') return [];
  const render = service.renderTimeoutMs;
  const wait = fn.kind === 'origin' ? fn.settings.missWaitMs : 0;
  const longest = Math.max(render, wait);
  const needed = longest + PUBLISH_MARGIN_MS;
  if (timeoutMs >= needed) return [];
  const what =
    wait > render ? `${nameOf('missWaitMs', fn.kind)}` : `${nameOf('renderTimeoutMs', fn.kind)}`;
  return [
    `${nameOf('functionTimeoutMs', fn.kind)} (${timeoutMs} ms) must leave room for a render and its ` +
      `publish: at least ${what} + ${PUBLISH_MARGIN_MS} ms = ${needed} ms, and at most 900 s`,
  ];
}

/** Headers that must never be chosen by configuration: OAC signs, Host routes, hop-by-hop. */
const RESERVED_HEADERS = new Set([
  'host',
  'authorization',
  'x-forwarded-host',
  'x-forwarded-for',
  'connection',
  'content-length',
  'transfer-encoding',
]);
const HEADER_NAME = /^[a-z0-9-]+$/;
const QUERY_PARAM_NAME = /^[^\s,&=#]+$/;

const headerProblems = (name: string, header: string): string[] =>
  HEADER_NAME.test(header) && !RESERVED_HEADERS.has(header)
    ? []
    : [
        `${name} ${JSON.stringify(header)} must be a plain lower-case header name other than ` +
          [...RESERVED_HEADERS].join(', '),
      ];

/** Header names travel lower-cased; both readers normalise the same way. */
export const normaliseHeaderName = (name: string): string => name.trim().toLowerCase();

function textProblems(
  service: ServiceSettings,
  nameOf: NameOf,
  deployTime: (text: string) => boolean,
): string[] {
  const problems: string[] = [];
  const { deployId, tenantHeader } = service;
  if (!deployTime(deployId) && (deployId.length < 1 || deployId.length > 128)) {
    problems.push(`${nameOf('deployId')} must be 1 to 128 characters`);
  }
  for (const param of service.allowedQueryParams) {
    if (deployTime(param) || QUERY_PARAM_NAME.test(param)) continue;
    problems.push(
      `${nameOf('allowedQueryParams')} entry ${JSON.stringify(param)} is not a query parameter name`,
    );
  }
  if (tenantHeader !== undefined && !deployTime(tenantHeader)) {
    problems.push(...headerProblems(nameOf('tenantHeader'), tenantHeader));
  }
  for (const key of ['cacheTagHeader', 'upstreamTagHeader'] as const) {
    const header = service[key];
    if (!deployTime(header)) problems.push(...headerProblems(nameOf(key), header));
  }
  return problems;
}

/** Loopback hosts, where plain http never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * A deployed upstream is reached over https only: plain http would carry the rendered pages
 * and the upstream secret in clear. http is for loopback hosts and local mode.
 */
function renderOriginUrlProblems(
  service: ServiceSettings,
  localMode: boolean,
  nameOf: NameOf,
  deployTime: (text: string) => boolean,
): string[] {
  const url = service.renderOriginUrl;
  if (url === undefined || deployTime(url)) return [];
  const name = nameOf('renderOriginUrl');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [`${name} is not a URL: ${url}`];
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return [`${name} must not carry credentials; use the upstream secret instead`];
  }
  if (parsed.protocol === 'https:') return [];
  if (parsed.protocol === 'http:' && (localMode || isLoopbackHost(parsed.hostname))) return [];
  if (parsed.protocol === 'http:') {
    return [
      `${name} must be https (http only for localhost, 127.0.0.0/8, ::1 or ` +
        `${nameOf('localMode')}), got ${url}`,
    ];
  }
  return [`${name} must be https, got ${url}`];
}

/** An allow-list needs multi-tenant mode, and each name must be one the cache key accepts. */
function tenantProblems(
  service: ServiceSettings,
  nameOf: NameOf,
  deployTime: (text: string) => boolean,
): string[] {
  const { tenants } = service;
  if (tenants === undefined) return [];
  const name = nameOf('tenants');
  const problems: string[] = [];
  if (tenants.length === 0) problems.push(`${name} must name at least one tenant`);
  if (service.tenantHeader === undefined) {
    problems.push(`${name} needs ${nameOf('tenantHeader')} (multi-tenant mode)`);
  }
  for (const tenant of tenants) {
    if (deployTime(tenant) || TENANT_PATTERN.test(tenant)) continue;
    problems.push(
      `${name} entry ${JSON.stringify(tenant)} must be 1-64 characters of A-Z, a-z, 0-9, ".", ` +
        `"_" or "-", starting alphanumeric`,
    );
  }
  return problems;
}

/** Every render path pattern must compile: a typo must not silently allow or refuse pages. */
function renderPathProblems(
  service: ServiceSettings,
  nameOf: NameOf,
  deployTime: (text: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const pattern of service.renderPaths) {
    if (deployTime(pattern)) continue;
    try {
      compilePathPatterns([pattern]);
    } catch (error) {
      problems.push(`${nameOf('renderPaths')}: ${(error as Error).message}`);
    }
  }
  return problems;
}

/** Kept headers are lower-case names (or prefixes ending in `*`); cookies have their own rule. */
function keptHeaderProblems(
  service: ServiceSettings,
  nameOf: NameOf,
  deployTime: (text: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const header of service.keptHeaders) {
    if (deployTime(header)) continue;
    if (!KEPT_HEADER_PATTERN.test(header) || header.startsWith('set-cookie')) {
      problems.push(
        `${nameOf('keptHeaders')} entry ${JSON.stringify(header)} must be a lower-case header ` +
          'name or a prefix ending in "*", never set-cookie',
      );
    }
  }
  if (!Object.values(SetCookiePolicy).includes(service.setCookie)) {
    problems.push(
      `${nameOf('setCookie')} must be one of ${Object.values(SetCookiePolicy).join(', ')}`,
    );
  }
  return problems;
}

/** A key prefix of safe characters ending in `/`, so IAM can scope the bucket to `<prefix>*`. */
function bodyKeyPrefixProblems(
  service: ServiceSettings,
  nameOf: NameOf,
  deployTime: (text: string) => boolean,
): string[] {
  const prefix = service.bodyKeyPrefix;
  if (deployTime(prefix) || /^[A-Za-z0-9!_.'()-]+(\/[A-Za-z0-9!_.'()-]+)*\/$/.test(prefix))
    return [];
  return [
    `${nameOf('bodyKeyPrefix')} ${JSON.stringify(prefix)} must be path segments of letters, digits and !_.'()- ending in "/"`,
  ];
}

/** A Secrets Manager secret's ARN (the upstream secret, the revalidation webhook's key). */
export const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/;

/** The secret goes to the upstream only, so it needs one; its header must be a plain name. */
function upstreamSecretProblems(
  service: ServiceSettings,
  nameOf: NameOf,
  deployTime: (text: string) => boolean,
): string[] {
  const secret = service.upstreamSecret;
  if (secret === undefined) return [];
  const problems: string[] = [];
  if (!deployTime(secret.arn) && !SECRET_ARN.test(secret.arn)) {
    problems.push(`${nameOf('upstreamSecretArn')} must be a Secrets Manager secret ARN`);
  }
  if (!deployTime(secret.header)) {
    problems.push(...headerProblems(nameOf('upstreamSecretHeader'), secret.header));
    if (secret.header === service.tenantHeader) {
      problems.push(`${nameOf('upstreamSecretHeader')} must differ from the tenant header`);
    }
  }
  if (service.renderOriginUrl === undefined) {
    problems.push(`${nameOf('upstreamSecretArn')} needs ${nameOf('renderOriginUrl')}`);
  }
  return problems;
}
