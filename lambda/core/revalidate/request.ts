/**
 * The HTTP contract of `POST /_isr/revalidate` (seeds 000 and 002), without transport or AWS
 * types: the body is parsed strictly and turned into a canonical request, the one that is hashed
 * into `request_hash`, kept in the REQ# row and compared with a reuse of the key. Each refusal
 * names the field; every answer body is built here so a replay can return it byte for byte.
 */
import {
  normaliseCacheKey,
  sha256Hex,
  tenantFor,
  type CacheKeyPolicy,
  type Tenancy,
} from '../page/cache-key.js';
import { type CacheKey, RevalidationMode } from '../page/model.js';
import { normaliseTag, tagProblem } from '../page/cache-tags.js';
import { InvalidCacheKeyError, InvalidKeyReason } from '../errors.js';
import type { JsonValue } from '../idempotency.js';
import { parsePageAddress } from './page-address.js';
import type { CdnPurge } from '../page/ports.js';
import type { AcceptedRevalidation } from './fan-out.js';
import type { HeldPages, Revalidation, RevalidationEffect, DeferredPurge } from './model.js';
import { deferredJson } from './soft-purge.js';

/** Largest request body read at all; the per-field limits below come first in practice. */
export const MAX_REVALIDATE_BODY_BYTES = 256 * 1024;
/** Longest `Idempotency-Key` (Stripe's bound): it becomes the sort key `REQ#<key>`. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** UUIDs, ULIDs, base64(url) digests and `provider:event-id` forms; nothing that needs escaping. */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._~:+/=-]+$/;
const FIELDS = new Set(['paths', 'tags', 'tenant', 'mode', 'regenerate', 'dry_run']);

/** How requests are checked: the cache-key policy and tenancy the origin applies, and limits. */
export interface RevalidatePolicy {
  readonly keyPolicy: CacheKeyPolicy;
  /** Multi-tenant mode: a tenant is required (and must be served when the list is set). */
  readonly tenancy: Tenancy | undefined;
  readonly maxPaths: number;
  readonly maxTags: number;
}

/**
 * A request as hashed and stored: keys sorted, paths as the cache keys the origin builds (so
 * `/a/` and `/a` are one request), tags normalised, both sorted and deduplicated, defaults filled.
 */
export interface CanonicalRevalidation {
  readonly mode: RevalidationMode;
  readonly paths: readonly string[];
  readonly regenerate: boolean;
  readonly tags: readonly string[];
  readonly tenant: string | null;
  /** A preview (`dry-run.ts`): never applied, claimed or stored, so not in `requestJson`. */
  readonly dryRun?: boolean | undefined;
}

/** Why a request is refused before anything is stored or applied: a 400 or a 413. */
export class RevalidateRequestError extends Error {
  override readonly name = 'RevalidateRequestError';
  constructor(
    readonly status: 400 | 413,
    readonly field: string,
    message: string,
    readonly limit?: number,
  ) {
    super(message);
  }
}

const invalid = (field: string, message: string): never => {
  throw new RevalidateRequestError(400, field, message);
};

/** The header's key, checked. @throws RevalidateRequestError (400) */
export function idempotencyKeyOf(header: string | undefined): string {
  const key = header?.trim();
  if (key === undefined || key === '') {
    return invalid('Idempotency-Key', 'the Idempotency-Key header is required');
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !IDEMPOTENCY_KEY.test(key)) {
    return invalid(
      'Idempotency-Key',
      `Idempotency-Key is 1-${MAX_IDEMPOTENCY_KEY_LENGTH} characters of A-Z a-z 0-9 . _ ~ : + / = -`,
    );
  }
  return key;
}

/** The body, parsed and validated into its canonical form. @throws RevalidateRequestError */
export function parseRevalidateBody(
  rawBody: string,
  policy: RevalidatePolicy,
): CanonicalRevalidation {
  return canonicalRevalidation(revalidateBodyFields(rawBody), policy);
}

/** The body's fields: a JSON object within the size limit. @throws RevalidateRequestError */
export function revalidateBodyFields(rawBody: string): Record<string, unknown> {
  if (Buffer.byteLength(rawBody, 'utf8') > MAX_REVALIDATE_BODY_BYTES) {
    throw new RevalidateRequestError(
      413,
      'body',
      `the body is larger than ${MAX_REVALIDATE_BODY_BYTES} bytes`,
      MAX_REVALIDATE_BODY_BYTES,
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return invalid('body', 'the body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return invalid('body', 'the body is a JSON object');
  }
  return body as Record<string, unknown>;
}

/** A body's fields validated into their canonical form. @throws RevalidateRequestError (400) */
export function canonicalRevalidation(
  fields: Record<string, unknown>,
  policy: RevalidatePolicy,
): CanonicalRevalidation {
  const unknown = Object.keys(fields).find((field) => !FIELDS.has(field));
  if (unknown !== undefined) invalid(unknown, `unknown field; expected ${[...FIELDS].join(', ')}`);
  const paths = stringList(fields.paths, 'paths', policy.maxPaths);
  const tags = stringList(fields.tags, 'tags', policy.maxTags);
  if (paths.length === 0 && tags.length === 0) {
    invalid('paths', 'name at least one path or tag');
  }
  const tenant = tenantOf(fields.tenant, policy);
  const mode = fields.mode ?? RevalidationMode.Stale;
  if (mode !== RevalidationMode.Stale && mode !== RevalidationMode.Expire) {
    invalid('mode', 'mode is "stale" or "expire"');
  }
  const regenerate = fields.regenerate ?? false;
  if (typeof regenerate !== 'boolean') invalid('regenerate', 'regenerate is true or false');
  const dryRun = fields.dry_run ?? false;
  if (typeof dryRun !== 'boolean') invalid('dry_run', 'dry_run is true or false');
  return {
    ...(dryRun === true ? { dryRun } : {}),
    mode: mode as RevalidationMode,
    paths: sortedUnique(paths.map((path, at) => cacheKeyOf(path, at, tenant, policy))),
    regenerate: regenerate as boolean,
    tags: sortedUnique(tags.map((tag, at) => checkedTag(tag, at))),
    tenant: tenant ?? null,
  };
}

function stringList(value: unknown, field: string, limit: number): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return invalid(field, `${field} is an array of strings`);
  if (value.length > limit) {
    throw new RevalidateRequestError(
      413,
      field,
      `at most ${limit} ${field} per request, got ${value.length}`,
      limit,
    );
  }
  value.forEach((item, at) => {
    if (typeof item !== 'string') invalid(`${field}[${at}]`, `${field}[${at}] is not a string`);
  });
  return value as string[];
}

/** How the endpoint words each refusal of the tenancy rule (`tenantFor`). */
const TENANT_REFUSALS: Readonly<Record<string, string>> = {
  [InvalidKeyReason.UnexpectedTenant]: 'this service is single-tenant: omit tenant',
  [InvalidKeyReason.MissingTenant]: 'tenant is required in multi-tenant mode',
  [InvalidKeyReason.InvalidTenant]:
    'tenant is 1-64 characters of A-Z a-z 0-9 . _ -, starting alphanumeric',
  [InvalidKeyReason.UnknownTenant]: 'this tenant is not served here',
};

function tenantOf(value: unknown, policy: RevalidatePolicy): string | undefined {
  if (value !== undefined && typeof value !== 'string') {
    const { UnexpectedTenant, MissingTenant } = InvalidKeyReason;
    return invalid('tenant', TENANT_REFUSALS[policy.tenancy ? MissingTenant : UnexpectedTenant]);
  }
  try {
    return tenantFor(policy.tenancy, value);
  } catch (error) {
    if (!(error instanceof InvalidCacheKeyError)) throw error;
    return invalid('tenant', TENANT_REFUSALS[error.reason] ?? error.message);
  }
}

/** A page address (`parsePageAddress`) keyed as the origin keys a request for it. */
const keyOfPath = (path: string, tenant: string | undefined, policy: RevalidatePolicy): CacheKey =>
  normaliseCacheKey({ tenant, ...parsePageAddress(path) }, policy.keyPolicy);

/** A path's cache key; refused exactly where the origin refuses it. */
function cacheKeyOf(
  path: string,
  at: number,
  tenant: string | undefined,
  policy: RevalidatePolicy,
): string {
  try {
    return keyOfPath(path, tenant, policy).key;
  } catch (error) {
    if (!(error instanceof InvalidCacheKeyError)) throw error;
    return invalid(`paths[${at}]`, `paths[${at}]: ${error.message} (${error.code})`);
  }
}

function checkedTag(tag: string, at: number): string {
  const problem = tagProblem(tag);
  if (problem !== undefined) invalid(`tags[${at}]`, `tags[${at}]: ${problem}`);
  return normaliseTag(tag);
}

const sortedUnique = (values: readonly string[]): string[] =>
  [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** The request as JSON for the REQ# row (`request`) and for Powertools' `request_hash`. */
export const requestJson = (request: CanonicalRevalidation): { [field: string]: JsonValue } => ({
  mode: request.mode,
  paths: [...request.paths],
  regenerate: request.regenerate,
  tags: [...request.tags],
  tenant: request.tenant,
});

/**
 * Where a tenant's revalidation requests live: one partition per tenant (`_` single-tenant), so
 * the same key in two tenants names two requests. Rows are `sk = REQ#<Idempotency-Key>`, written
 * by the revalidate function only (a claim, then its settlement) and collected by TTL.
 */
export const revalidationPartition = (tenant: string | null): string =>
  `REVALIDATE#${tenant ?? '_'}`;

/**
 * One per claim of a key: every answer for the claim names it, and a key used again once its
 * window has passed (a new claim) names a new effect, so its CDN purge is a new invalidation
 * (CloudFront answers a reused CallerReference with the old one and purges nothing).
 */
export const effectIdOf = (pk: string, key: string, claimToken: string): string =>
  `rv_${sha256Hex(`${pk}|${key}|${claimToken}`).slice(0, 32)}`;

/** What `revalidate()` is asked to do for a canonical request. */
export function revalidationOf(
  request: CanonicalRevalidation,
  effectId: string,
  policy: RevalidatePolicy,
): Revalidation {
  const tenant = request.tenant ?? undefined;
  return {
    tenant,
    // Canonical keys normalise to themselves.
    keys: request.paths.map((key) => keyOfPath(key, tenant, policy)),
    tags: request.tags,
    mode: request.mode,
    regenerate: request.regenerate,
    effectId,
  };
}

/**
 * Field by field, what differs between the request a key was first used with and this one: the
 * body of the 409 a reuse with another body gets.
 */
export function requestDiff(
  stored: JsonValue | undefined,
  received: { [field: string]: JsonValue },
): Record<string, { stored: JsonValue; received: JsonValue }> {
  const first = (stored ?? {}) as { [field: string]: JsonValue };
  const diff: Record<string, { stored: JsonValue; received: JsonValue }> = {};
  for (const field of [...new Set([...Object.keys(first), ...Object.keys(received)])].sort()) {
    const a = first[field] ?? null;
    const b = received[field] ?? null;
    if (JSON.stringify(a) !== JSON.stringify(b)) diff[field] = { stored: a, received: b };
  }
  return diff;
}

/** The CDN part of a receipt, in the receipt's snake_case. */
const cdnOf = (purge: CdnPurge | DeferredPurge): JsonValue => {
  switch (purge.status) {
    case 'submitted':
      return { status: purge.status, invalidation_ids: [...purge.invalidationIds] };
    case 'pending':
      return { status: purge.status, reason: purge.reason };
    case 'deferred':
      return deferredJson(purge.deadlineSeconds, purge.deadlineAtMs);
    default:
      return { status: purge.status };
  }
};

/** Held pages as the receipt lists them (at most `HELD_PAGES_LISTED`). */
const heldPagesOf = (held: HeldPages): JsonValue =>
  held.pages.map((page) => ({ key: page.key, hold_until: page.holdUntil }));

/** The 202 receipt: what was done, under which effect, and where the CDN purge stands. */
export function receiptOf(
  request: CanonicalRevalidation,
  effectId: string,
  effect: RevalidationEffect & { readonly marking?: AcceptedRevalidation['marking'] },
): { [field: string]: JsonValue } {
  const marking = effect.marking;
  return {
    effect_id: effectId,
    status: 'accepted',
    mode: request.mode,
    regenerate: request.regenerate,
    tenant: request.tenant,
    counts: {
      paths: request.paths.length,
      tags: request.tags.length,
      pages: effect.pages,
      regenerations: effect.regenerations,
      held: effect.held.count,
    },
    ...(effect.held.count === 0 ? {} : { held_pages: heldPagesOf(effect.held) }),
    // Tags still being marked: `counts.pages` is the pages marked so far (paths); `expected_pages`
    // those it will have marked in all (the tags' index counted up to a bound). Follow the status.
    ...(marking === undefined || marking.tags === 0
      ? {}
      : {
          marking: {
            state: 'marking',
            tags: marking.tags,
            expected_pages: marking.expected.count,
            expected_exact: marking.expected.exact,
            // The command that follows it (`GET <revalidate URL>/<effect_id>` is what it reads).
            status: `isr revalidate status ${effectId} --wait`,
          },
        }),
    cdn: cdnOf(effect.cdn),
  };
}
