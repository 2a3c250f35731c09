/**
 * The adapter's configuration, read from the environment of `next start` in one place and
 * checked once, with an error naming the variable. How it calls the revalidate endpoint:
 * HMAC when a secret is set, SigV4 (the default AWS credential chain) for any other non-loopback
 * URL, and unsigned on loopback (`npm start`'s open route).
 */
import { TENANT_PATTERN } from '../lambda/core/page/rows.js';

export type EndpointAuth =
  | { readonly kind: 'open' }
  | { readonly kind: 'hmac'; readonly secret: string }
  | { readonly kind: 'sigv4'; readonly region: string };

export interface AdapterConfig {
  /** The revalidate endpoint: the stack's RevalidateUrl, or npm start's `/_isr/revalidate`. */
  readonly url: URL;
  readonly auth: EndpointAuth;
  /** In multi-tenant mode, the tenant every revalidation names. */
  readonly tenant: string | undefined;
}

/** A setting that cannot be used; the message names the variable and what it takes. */
export class AdapterConfigError extends Error {
  override readonly name = 'AdapterConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`facetheory-isr/next: ${variable} ${message}`);
  }
}

/** The header the service reads a page's tags from (its own ISR_UPSTREAM_TAG_HEADER). */
export const DEFAULT_TAG_HEADER = 'cache-tag';
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** The function URL's own region: `<id>.lambda-url.<region>.on.aws`. */
const FUNCTION_URL_HOST = /^[a-z0-9]+\.lambda-url\.([a-z0-9-]+)\.on\.aws$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

type Env = Readonly<Record<string, string | undefined>>;
const valueOf = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
};

/** The response header Next's answers carry the page's tags in. */
export function tagHeaderOf(env: Env): string {
  const name = valueOf(env, 'ISR_UPSTREAM_TAG_HEADER') ?? DEFAULT_TAG_HEADER;
  if (!HEADER_NAME.test(name)) {
    throw new AdapterConfigError('ISR_UPSTREAM_TAG_HEADER', `is not a header name: ${name}`);
  }
  return name.toLowerCase();
}

const isLoopback = (url: URL): boolean =>
  url.hostname === 'localhost' ||
  url.hostname === '[::1]' ||
  /^127\.\d+\.\d+\.\d+$/.test(url.hostname);

function urlOf(env: Env): URL {
  const raw = valueOf(env, 'ISR_REVALIDATE_URL');
  const example =
    'e.g. http://127.0.0.1:3000/_isr/revalidate (npm start) or the RevalidateUrl output';
  if (raw === undefined)
    throw new AdapterConfigError('ISR_REVALIDATE_URL', `is required: ${example}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AdapterConfigError('ISR_REVALIDATE_URL', `is not a URL (${example}): ${raw}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url))) {
    throw new AdapterConfigError(
      'ISR_REVALIDATE_URL',
      `must be https (or http on loopback): ${raw}`,
    );
  }
  return url;
}

function authOf(env: Env, url: URL): EndpointAuth {
  const secret = valueOf(env, 'ISR_REVALIDATE_SECRET');
  if (secret !== undefined) return { kind: 'hmac', secret };
  if (isLoopback(url)) return { kind: 'open' };
  const region =
    valueOf(env, 'ISR_REVALIDATE_REGION') ??
    FUNCTION_URL_HOST.exec(url.hostname)?.[1] ??
    valueOf(env, 'AWS_REGION');
  if (region === undefined) {
    throw new AdapterConfigError(
      'ISR_REVALIDATE_REGION',
      'is required to sign with SigV4 (or set ISR_REVALIDATE_SECRET for an HMAC endpoint)',
    );
  }
  if (!REGION.test(region))
    throw new AdapterConfigError('ISR_REVALIDATE_REGION', `is not a region: ${region}`);
  return { kind: 'sigv4', region };
}

function tenantOf(env: Env): string | undefined {
  const tenant = valueOf(env, 'ISR_REVALIDATE_TENANT');
  if (tenant !== undefined && !TENANT_PATTERN.test(tenant)) {
    throw new AdapterConfigError(
      'ISR_REVALIDATE_TENANT',
      `is 1-64 characters of A-Z a-z 0-9 . _ -, starting alphanumeric: ${tenant}`,
    );
  }
  return tenant;
}

/** The endpoint's configuration. @throws AdapterConfigError naming the variable */
export function loadAdapterConfig(env: Env): AdapterConfig {
  const url = urlOf(env);
  return { url, auth: authOf(env, url), tenant: tenantOf(env) };
}
