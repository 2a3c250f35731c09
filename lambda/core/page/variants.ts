/**
 * Representation variants: request headers that select another representation of one page
 * (Next.js RSC payloads: `rsc`, `next-router-prefetch`, `next-router-segment-prefetch`). Each
 * variant is its own cache key, derived from the page's key and the normalised variant, so its
 * META is a plain FaceTheory row. Every value is bounded (a closed set, or a charset and a
 * length); a request outside the bounds names no entry and is refused (400 with the reason), so a
 * viewer can never grow a page's variants with made-up values. A variant row is indexed under its
 * page's variant tag (`variantTagOf`), which is how a path revalidation finds every variant.
 */
import { createHash } from 'node:crypto';
import { MAX_TAGS_PER_PAGE } from './cache-tags.js';
import {
  InvalidCacheKeyError,
  InvalidKeyReason,
  RefusalReason,
  RenderRefusedError,
} from '../errors.js';
import {
  isPrivilegedHeader,
  PRIVILEGED_HEADER_PREFIXES,
  PRIVILEGED_HEADERS,
} from '../traffic-rules.js';

/** One header that selects a variant, and the values it may take. */
export interface VariantRule {
  /** Lower-case header name. */
  readonly name: string;
  /** The values accepted, exactly; any other is out of bounds. */
  readonly values?: readonly string[] | undefined;
  /** Open-ended values: characters allowed, as a regex character class body (`A-Za-z0-9_/`). */
  readonly charset?: string | undefined;
  /** Longest value accepted. @default 256 */
  readonly maxLength?: number | undefined;
}

/** How a variant's render asks the upstream for it, beyond its headers. */
export const VariantParam = {
  None: 'none',
  /** Next.js: `_rsc` computed from the variant's headers, as Next's client does. */
  NextRsc: 'next-rsc',
} as const;
export type VariantParam = (typeof VariantParam)[keyof typeof VariantParam];

export const DEFAULT_VARIANT_MAX_LENGTH = 256;
/** Longest canonical variant accepted (it is part of the hashed key). */
export const MAX_VARIANT_LENGTH = 512;
/** The separator between a page's key and its variant: never in a canonical path or query. */
export const VARIANT_SEPARATOR = '#';

const refuse = (message: string): never => {
  throw new InvalidCacheKeyError(InvalidKeyReason.VariantOutOfBounds, message);
};

/** The regex a rule's open-ended values must match (anchored, bounded, no alternation). */
const valuePattern = (rule: VariantRule): RegExp =>
  new RegExp(`^[${rule.charset ?? ''}]{1,${rule.maxLength ?? DEFAULT_VARIANT_MAX_LENGTH}}$`);

/** The `variantHeaders` setting's JSON, shape-checked (bounds are `variantRuleProblems`'). */
export function parseVariantRules(value: unknown): VariantRule[] {
  const must = 'must be a list of {name, values?, charset?, maxLength?}';
  if (!Array.isArray(value)) throw new Error(must);
  return value.map((entry: unknown) => {
    const rule = entry as Record<string, unknown>;
    const values = rule?.values;
    const ok =
      typeof rule === 'object' &&
      rule !== null &&
      typeof rule.name === 'string' &&
      (values === undefined ||
        (Array.isArray(values) && values.every((item) => typeof item === 'string'))) &&
      (rule.charset === undefined || typeof rule.charset === 'string') &&
      (rule.maxLength === undefined || typeof rule.maxLength === 'number') &&
      Object.keys(rule).every((key) => ['name', 'values', 'charset', 'maxLength'].includes(key));
    if (!ok) throw new Error(must);
    return rule as unknown as VariantRule;
  });
}

/** Why a rule cannot be used, as sentences; none when it can. */
export function variantRuleProblems(rule: VariantRule, name: string): string[] {
  const problems: string[] = [];
  if (!/^[a-z0-9-]+$/.test(rule.name) || /^(host|cookie|authorization)$/.test(rule.name)) {
    problems.push(`${name} ${rule.name} is not a header name a page may vary on`);
  }
  if (isPrivilegedHeader(rule.name, PRIVILEGED_HEADERS, PRIVILEGED_HEADER_PREFIXES)) {
    problems.push(`${name} ${rule.name} is privileged: the edge strips it`);
  }
  if ((rule.values === undefined) === (rule.charset === undefined)) {
    problems.push(`${name} ${rule.name} needs exactly one of values or charset`);
  }
  if (rule.charset !== undefined && !/^[\x21-\x7e]+$/.test(rule.charset)) {
    problems.push(`${name} ${rule.name}: charset is visible ASCII`);
  } else if (rule.charset !== undefined && /[\]\\^[]/.test(rule.charset.replace(/\\-/g, ''))) {
    problems.push(`${name} ${rule.name}: charset must not contain ], [, ^ or \\ (except \\-)`);
  }
  const max = rule.maxLength ?? DEFAULT_VARIANT_MAX_LENGTH;
  if (!Number.isInteger(max) || max < 1 || max > DEFAULT_VARIANT_MAX_LENGTH) {
    problems.push(`${name} ${rule.name}: maxLength is 1..${DEFAULT_VARIANT_MAX_LENGTH}`);
  }
  for (const value of rule.values ?? []) {
    if (value.length === 0 || value.length > max || !/^[\x21-\x7e]+$/.test(value)) {
      problems.push(`${name} ${rule.name}: value ${JSON.stringify(value)} is not usable`);
    }
  }
  return problems;
}

/**
 * The canonical variant of a request: each configured header present, checked against its
 * rule, as `name=value` pairs sorted by name ('' when none is present). No other header is read.
 * @throws InvalidCacheKeyError (`variant-out-of-bounds`)
 */
export function normaliseVariant(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  rules: readonly VariantRule[],
): string {
  if (headers === undefined || rules.length === 0) return '';
  const pairs: string[] = [];
  for (const rule of [...rules].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const value = headers[rule.name]?.trim();
    if (value === undefined || value === '') continue;
    const ok = rule.values?.includes(value) ?? valuePattern(rule).test(value);
    if (!ok) refuse(`the ${rule.name} header's value is not one this service keys on`);
    pairs.push(`${rule.name}=${encodeURIComponent(value)}`);
  }
  const variant = pairs.join('&');
  if (variant.length > MAX_VARIANT_LENGTH) {
    refuse(`the variant headers are longer than ${MAX_VARIANT_LENGTH} characters`);
  }
  return variant;
}

/** A canonical variant back as the headers its render is sent (lower-case names). */
export function variantHeadersOf(variant: string): Record<string, string> {
  if (variant === '') return {};
  return Object.fromEntries(
    variant.split('&').map((pair) => {
      const eq = pair.indexOf('=');
      try {
        return [pair.slice(0, eq), decodeURIComponent(pair.slice(eq + 1))];
      } catch {
        return refuse('the variant is not canonical');
      }
    }),
  );
}

/** The index tag every variant of a page is published under: a path revalidation reads it. */
export const variantTagOf = (pageHash: string): string => `isr-variants:${pageHash.slice(0, 40)}`;

/**
 * `_rsc` as Next.js 16 computes it (`computeCacheBustingSearchParam`): SHA-256 of
 * "prefetch,segment,stateTree,nextUrl" (absent as "0"), 12 bytes, base64url; '' for plain
 * `RSC: 1`. `next start` answers an RSC request whose `_rsc` disagrees with a 307.
 */
export function nextRscParamOf(headers: Readonly<Record<string, string | undefined>>): string {
  const parts = [
    headers['next-router-prefetch'],
    headers['next-router-segment-prefetch'],
    headers['next-router-state-tree'],
    headers['next-url'],
  ];
  if (parts.every((part) => part === undefined)) return '';
  const input = parts.map((part) => part ?? '0').join(',');
  return createHash('sha256').update(input).digest().subarray(0, 12).toString('base64url');
}

/** The query a variant's render adds (`_rsc=<hash>`, or bare `_rsc`), '' when none. */
export function variantQueryOf(variant: string, param: VariantParam | undefined): string {
  if (param !== VariantParam.NextRsc) return '';
  const headers = variantHeadersOf(variant);
  if (headers.rsc === undefined) return '';
  const hash = nextRscParamOf(headers);
  return hash === '' ? '_rsc' : `_rsc=${hash}`;
}

/**
 * The `Vary` of every answer: the tenant header, each variant header, then any other header
 * this key's variant names (a key rule's `accept`).
 */
export function varyOf(
  tenantHeader: string | undefined,
  rules: readonly VariantRule[] | undefined,
  variant?: string,
): string | undefined {
  const names = [...(tenantHeader === undefined ? [] : [tenantHeader])];
  for (const rule of rules ?? []) names.push(rule.name);
  for (const name of Object.keys(variantHeadersOf(variant ?? ''))) {
    if (!names.includes(name)) names.push(name);
  }
  return names.length === 0 ? undefined : names.join(', ');
}

/**
 * What a variant adds to the cache policy (`admitPage`): its 404 is never kept (Next answers a
 * prefetch of a segment the page lacks with a 404 that carries the page's `s-maxage`), and it is
 * indexed under its page's variant tag, so a revalidation of the page's path reaches it.
 * @throws RenderRefusedError (`variant-not-found`)
 */
export function admitVariant<
  P extends { readonly status: number; readonly tags: readonly string[] },
>(
  page: P,
  cacheKey: { readonly variant?: string | undefined; readonly pageHash?: string | undefined },
): P {
  if (!cacheKey.variant || cacheKey.pageHash === undefined) return page;
  if (page.status === 404) {
    throw new RenderRefusedError(
      RefusalReason.VariantNotFound,
      "a variant answered 404: only its page's own 404 is kept",
      page.status,
    );
  }
  const tag = variantTagOf(cacheKey.pageHash);
  const tags = page.tags.filter((kept) => kept !== tag).slice(0, MAX_TAGS_PER_PAGE - 1);
  return { ...page, tags: [...tags, tag] };
}
