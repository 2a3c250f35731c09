import { RefusalReason, RenderRefusedError, RenderRetryableError } from '../../core/errors.js';
import { upstreamRelativeLocation, type PublicOrigin } from '../../core/forwarding.js';
import type { RenderRequest, Renderer } from '../../core/regenerate/ports.js';
import type { RenderResult } from '../../core/page/model.js';
import type { LogSink } from '../../core/log.js';
import type { SecretSource } from '../../core/page/ports.js';
import { variantHeadersOf, variantQueryOf, type VariantParam } from '../../core/page/variants.js';

export interface HttpRendererOptions {
  /** The SSR origin, e.g. `http://ssr.internal:8080/app`. Only ever this host is fetched. */
  readonly originUrl: string;
  /** In multi-tenant mode, the header that carries the tenant to the upstream. */
  readonly tenantHeader?: string | undefined;
  /** The response header a page's tags come from, comma-separated. @default 'cache-tag' */
  readonly tagHeader?: string | undefined;
  /** Largest body read: reading stops there and the page is refused. */
  readonly maxBodyBytes: number;
  /**
   * A shared secret sent to the upstream in this header, so it can refuse anyone else.
   * @default - none
   */
  readonly secretHeader?: { readonly name: string; readonly secret: SecretSource } | undefined;
  /** What a variant's render adds to its query (Next.js: `_rsc`). @default 'none' */
  readonly variantParam?: VariantParam | undefined;
  /** The viewers' host and scheme, sent in X-Forwarded-Host/-Proto (single-tenant renders). */
  readonly publicOrigin?: PublicOrigin | undefined;
  /** Each tenant's host and scheme (`tenantOrigins`), sent the same way on its renders. */
  readonly tenantOrigins?: ReadonlyMap<string, PublicOrigin> | undefined;
  /** Told once per tenant that has no origin in `tenantOrigins`. @default - nobody */
  readonly log?: LogSink | undefined;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/**
 * Renders by fetching the page from an upstream SSR origin. The request is built from the cache
 * key alone (a variant's headers are part of it): no other viewer header, cookie or host ever
 * reaches the upstream, so nothing outside the cache key can change a cached page. Redirects are returned, not followed. The caller applies
 * the timeout (below the lease) through `signal`, and the cache policy (`admitPage`) to what
 * comes back, headers included.
 */
export class HttpRenderer implements Renderer {
  readonly #origin: URL;
  readonly #options: HttpRendererOptions;
  readonly #fetch: typeof fetch;
  readonly #unmapped = new Set<string>();

  constructor(options: HttpRendererOptions) {
    this.#origin = new URL(options.originUrl);
    if (this.#origin.protocol !== 'http:' && this.#origin.protocol !== 'https:') {
      throw new Error(`render origin must be http(s): ${options.originUrl}`);
    }
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async render({ cacheKey, signal }: RenderRequest): Promise<RenderResult> {
    const url = new URL(this.#origin);
    url.pathname = `${this.#origin.pathname.replace(/\/$/, '')}${cacheKey.path}`;
    const variant = cacheKey.variant ?? '';
    url.search = [cacheKey.query, variantQueryOf(variant, this.#options.variantParam)]
      .filter((part) => part !== '')
      .join('&');
    const headers: Record<string, string> = {
      accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
      // After the default: a key's normalised Accept (`core/key-rules.ts`) is its render's.
      ...variantHeadersOf(variant),
      'user-agent': 'facetheory-isr (regeneration)',
      'x-isr-regeneration': '1',
    };
    if (cacheKey.tenant !== undefined && this.#options.tenantHeader !== undefined) {
      headers[this.#options.tenantHeader] = cacheKey.tenant;
    }
    // The host viewers use, so the app's absolute URLs name it: a tenant's own, or none.
    const publicOrigin = this.#publicOriginOf(cacheKey.tenant);
    if (publicOrigin !== undefined) {
      headers['x-forwarded-host'] = publicOrigin.host;
      headers['x-forwarded-proto'] = publicOrigin.proto;
    }
    const secretHeader = this.#options.secretHeader;
    if (secretHeader !== undefined) {
      try {
        headers[secretHeader.name] = await secretHeader.secret.value();
      } catch (error) {
        throw new RenderRetryableError('the upstream secret is not available', undefined, {
          cause: error,
        });
      }
    }
    let response: Response;
    try {
      response = await this.#fetch(url, { method: 'GET', headers, redirect: 'manual', signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new RenderRetryableError(`upstream ${url.origin} unreachable`, undefined, {
        cause: error,
      });
    }
    const body = await readLimited(response, this.#options.maxBodyBytes);
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      body,
      headers: Object.fromEntries([...response.headers].filter(([name]) => name !== 'set-cookie')),
      setCookies: response.headers.getSetCookie(),
      tags: (response.headers.get(this.#options.tagHeader ?? 'cache-tag') ?? '')
        .split(',')
        .map((tag) => tag.trim())
        .filter((tag) => tag !== ''),
      location: this.#relativeLocation(response.headers.get('location')),
    };
  }

  /** The origin a key's render names: the tenant's (warned once when it has none), else publicOrigin. */
  #publicOriginOf(tenant: string | undefined): PublicOrigin | undefined {
    if (tenant === undefined) return this.#options.publicOrigin;
    const origin = this.#options.tenantOrigins?.get(tenant);
    if (origin === undefined && !this.#unmapped.has(tenant)) {
      this.#unmapped.add(tenant);
      this.#options.log?.warn('tenant has no public origin; its renders name no host', {
        decision: 'no-forwarded-host',
        tenant,
      });
    }
    return origin;
  }

  /** A redirect to the upstream's own host is made relative, so it never leaks to viewers. */
  #relativeLocation(location: string | null): string | undefined {
    return location === null ? undefined : upstreamRelativeLocation(location, this.#origin);
  }
}

async function readLimited(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new RenderRefusedError(
      RefusalReason.TooLarge,
      `upstream body of ${declared} bytes is over the ${maxBytes}-byte limit`,
      response.status,
    );
  }
  if (response.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new RenderRefusedError(
        RefusalReason.TooLarge,
        `upstream body is over the ${maxBytes}-byte limit`,
        response.status,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
