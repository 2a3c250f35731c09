/**
 * What the local CloudFront runs: the distribution as the synthesized template configures it,
 * read out of the template itself (behaviours in order, their cache, origin request and response
 * headers policies, the viewer-request function's code, origins and their access control, error
 * caching, `CacheTagConfig`). Never a second configuration written by hand: change the CDK code
 * and the local edge changes with it.
 */

/** A cache policy's cache key and TTLs (CloudFormation `CachePolicyConfig`). */
export interface CachePolicyConfig {
  readonly name: string;
  readonly minTtl: number;
  readonly defaultTtl: number;
  readonly maxTtl: number;
  readonly headers: ItemsConfig<'none' | 'whitelist'>;
  readonly cookies: ItemsConfig<'none' | 'whitelist' | 'allExcept' | 'all'>;
  readonly queryStrings: ItemsConfig<'none' | 'whitelist' | 'allExcept' | 'all'>;
  readonly gzip: boolean;
  readonly brotli: boolean;
}

/** What an origin request policy forwards besides the cache key (`OriginRequestPolicyConfig`). */
export interface OriginRequestPolicyConfig {
  readonly name: string;
  readonly headers: ItemsConfig<
    'none' | 'whitelist' | 'allViewer' | 'allViewerAndWhitelistCloudFront' | 'allExcept'
  >;
  readonly cookies: ItemsConfig<'none' | 'whitelist' | 'allExcept' | 'all'>;
  readonly queryStrings: ItemsConfig<'none' | 'whitelist' | 'allExcept' | 'all'>;
}

export interface ItemsConfig<B extends string> {
  readonly behavior: B;
  /** Lower-case for headers; as written for cookies and query strings. */
  readonly items: readonly string[];
}

/** The response headers policy, as far as the service uses one: headers removed, headers set. */
export interface ResponseHeadersPolicyConfig {
  readonly remove: readonly string[];
  readonly set: readonly {
    readonly name: string;
    readonly value: string;
    readonly override: boolean;
  }[];
}

export interface EdgeBehaviour {
  /** `*` for the default behaviour, which is always last. */
  readonly pathPattern: string;
  readonly originId: string;
  readonly allowedMethods: readonly string[];
  readonly cachedMethods: readonly string[];
  readonly cachePolicy: CachePolicyConfig;
  readonly originRequestPolicy: OriginRequestPolicyConfig | undefined;
  readonly responseHeadersPolicy: ResponseHeadersPolicyConfig | undefined;
  /** The viewer-request CloudFront Function's code, when one is associated. */
  readonly viewerRequestFunction: string | undefined;
  readonly compress: boolean;
}

export interface EdgeOrigin {
  readonly id: string;
  /** `function-url`: a Lambda function URL behind origin access control; `http`: any other. */
  readonly kind: 'function-url' | 'http';
  /** OAC's signing behaviour (`always`, `never`, `no-override`), when there is an OAC. */
  readonly signing: string | undefined;
  readonly originPath: string;
  /** Custom origin headers; a value only known at deploy (a secret) is undefined. */
  readonly customHeaders: Readonly<Record<string, string | undefined>>;
  readonly readTimeoutSeconds: number;
}

export interface EdgeConfig {
  readonly behaviours: readonly EdgeBehaviour[];
  readonly origins: Readonly<Record<string, EdgeOrigin>>;
  /** `CustomErrorResponses`' `ErrorCachingMinTTL` by status; CloudFront's 10 s elsewhere. */
  readonly errorCachingMinTtl: Readonly<Record<string, number>>;
  /** `CacheTagConfig.HeaderName`, lower-case; absent: tags are ignored. */
  readonly cacheTagHeader: string | undefined;
}

type Json = Record<string, unknown>;
interface Resource {
  readonly Type: string;
  readonly Properties?: Json;
}

/**
 * The managed policies the construct uses, as AWS documents them ("Use managed cache policies",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-cache-policies.html;
 * "Use managed origin request policies",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-origin-request-policies.html).
 */
const MANAGED_CACHE_POLICIES: Readonly<Record<string, CachePolicyConfig>> = {
  '4135ea2d-6df8-44a3-9df3-4b5a84be39ad': {
    name: 'Managed-CachingDisabled',
    minTtl: 0,
    defaultTtl: 0,
    maxTtl: 0,
    headers: { behavior: 'none', items: [] },
    cookies: { behavior: 'none', items: [] },
    queryStrings: { behavior: 'none', items: [] },
    gzip: false,
    brotli: false,
  },
};
const MANAGED_ORIGIN_REQUEST_POLICIES: Readonly<Record<string, OriginRequestPolicyConfig>> = {
  'b689b0a8-53d0-40ab-baf2-68738e2966ac': {
    name: 'Managed-AllViewerExceptHostHeader',
    headers: { behavior: 'allExcept', items: ['host'] },
    cookies: { behavior: 'all', items: [] },
    queryStrings: { behavior: 'all', items: [] },
  },
};

/** The methods a behaviour takes and caches when the template does not say (CloudFormation's defaults). */
const GET_HEAD = ['GET', 'HEAD'];

/** The edge of `template` (its one distribution, or `distributionId`'s). */
export function edgeConfigOf(template: unknown, distributionId?: string): EdgeConfig {
  const resources = (template as { Resources?: Record<string, Resource> }).Resources ?? {};
  const ids = Object.keys(resources).filter(
    (id) => resources[id]?.Type === 'AWS::CloudFront::Distribution',
  );
  const id = distributionId ?? (ids.length === 1 ? ids[0] : undefined);
  if (id === undefined) {
    throw new Error(`the template has ${ids.length} distributions; name the one to run`);
  }
  const config = (resources[id]?.Properties?.DistributionConfig ?? {}) as Json;
  const read = new TemplateReader(resources);
  const extra = (config.CacheBehaviors ?? []) as Json[];
  const behaviours = [
    ...extra.map((behaviour) => read.behaviour(behaviour, String(behaviour.PathPattern))),
    read.behaviour(config.DefaultCacheBehavior as Json, '*'),
  ];
  const origins = Object.fromEntries(
    ((config.Origins ?? []) as Json[]).map((origin) => [origin.Id, read.origin(origin)]),
  ) as Record<string, EdgeOrigin>;
  const errorCachingMinTtl = Object.fromEntries(
    ((config.CustomErrorResponses ?? []) as Json[])
      .filter((entry) => entry.ErrorCachingMinTTL !== undefined)
      .map((entry) => [String(entry.ErrorCode), Number(entry.ErrorCachingMinTTL)]),
  );
  const tagHeader = (config.CacheTagConfig as Json | undefined)?.HeaderName;
  return {
    behaviours,
    origins,
    errorCachingMinTtl,
    cacheTagHeader: typeof tagHeader === 'string' ? tagHeader.toLowerCase() : undefined,
  };
}

/** Resolves the template's references (Ref, Fn::GetAtt) to the resources they name. */
class TemplateReader {
  constructor(private readonly resources: Record<string, Resource>) {}

  behaviour(behaviour: Json, pathPattern: string): EdgeBehaviour {
    const fn = ((behaviour.FunctionAssociations ?? []) as Json[]).find(
      (association) => association.EventType === 'viewer-request',
    );
    return {
      pathPattern,
      originId: String(behaviour.TargetOriginId),
      allowedMethods: (behaviour.AllowedMethods as string[] | undefined) ?? GET_HEAD,
      cachedMethods: (behaviour.CachedMethods as string[] | undefined) ?? GET_HEAD,
      cachePolicy: this.cachePolicy(behaviour.CachePolicyId),
      originRequestPolicy:
        behaviour.OriginRequestPolicyId === undefined
          ? undefined
          : this.originRequestPolicy(behaviour.OriginRequestPolicyId),
      responseHeadersPolicy:
        behaviour.ResponseHeadersPolicyId === undefined
          ? undefined
          : this.responseHeadersPolicy(behaviour.ResponseHeadersPolicyId),
      viewerRequestFunction:
        fn === undefined ? undefined : String(this.resource(fn.FunctionARN).FunctionCode),
      compress: behaviour.Compress === true,
    };
  }

  origin(origin: Json): EdgeOrigin {
    const oac =
      origin.OriginAccessControlId === undefined
        ? undefined
        : ((this.resource(origin.OriginAccessControlId).OriginAccessControlConfig ?? {}) as Json);
    const custom = (origin.CustomOriginConfig ?? {}) as Json;
    return {
      id: String(origin.Id),
      kind: oac?.OriginAccessControlOriginType === 'lambda' ? 'function-url' : 'http',
      signing: oac === undefined ? undefined : String(oac.SigningBehavior),
      originPath: typeof origin.OriginPath === 'string' ? origin.OriginPath : '',
      customHeaders: Object.fromEntries(
        ((origin.OriginCustomHeaders ?? []) as Json[]).map((header) => [
          String(header.HeaderName).toLowerCase(),
          typeof header.HeaderValue === 'string' ? header.HeaderValue : undefined,
        ]),
      ),
      readTimeoutSeconds: Number(custom.OriginReadTimeout ?? 30),
    };
  }

  private cachePolicy(reference: unknown): CachePolicyConfig {
    if (typeof reference === 'string') return managed(MANAGED_CACHE_POLICIES, reference, 'cache');
    const config = (this.resource(reference).CachePolicyConfig ?? {}) as Json;
    const key = (config.ParametersInCacheKeyAndForwardedToOrigin ?? {}) as Json;
    return {
      name: nameOf(config.Name),
      minTtl: Number(config.MinTTL ?? 0),
      defaultTtl: Number(config.DefaultTTL ?? 86_400),
      maxTtl: Number(config.MaxTTL ?? 31_536_000),
      headers: items(key.HeadersConfig, 'HeaderBehavior', 'Headers', true),
      cookies: items(key.CookiesConfig, 'CookieBehavior', 'Cookies', false),
      queryStrings: items(key.QueryStringsConfig, 'QueryStringBehavior', 'QueryStrings', false),
      gzip: key.EnableAcceptEncodingGzip === true,
      brotli: key.EnableAcceptEncodingBrotli === true,
    };
  }

  private originRequestPolicy(reference: unknown): OriginRequestPolicyConfig {
    if (typeof reference === 'string') {
      return managed(MANAGED_ORIGIN_REQUEST_POLICIES, reference, 'origin request');
    }
    const config = (this.resource(reference).OriginRequestPolicyConfig ?? {}) as Json;
    return {
      name: nameOf(config.Name),
      headers: items(config.HeadersConfig, 'HeaderBehavior', 'Headers', true),
      cookies: items(config.CookiesConfig, 'CookieBehavior', 'Cookies', false),
      queryStrings: items(config.QueryStringsConfig, 'QueryStringBehavior', 'QueryStrings', false),
    };
  }

  private responseHeadersPolicy(reference: unknown): ResponseHeadersPolicyConfig {
    if (typeof reference === 'string') {
      throw new Error(`managed response headers policy ${reference} is not emulated`);
    }
    const config = (this.resource(reference).ResponseHeadersPolicyConfig ?? {}) as Json;
    const removed = ((config.RemoveHeadersConfig as Json | undefined)?.Items ?? []) as Json[];
    const custom = ((config.CustomHeadersConfig as Json | undefined)?.Items ?? []) as Json[];
    return {
      remove: removed.map((item) => String(item.Header).toLowerCase()),
      set: custom.map((item) => ({
        name: String(item.Header).toLowerCase(),
        value: String(item.Value),
        override: item.Override === true,
      })),
    };
  }

  /** The Properties of the resource a `Ref` or `Fn::GetAtt` names. */
  private resource(reference: unknown): Json {
    const ref = reference as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    const id = ref.Ref ?? ref['Fn::GetAtt']?.[0];
    const resource = id === undefined ? undefined : this.resources[id];
    if (resource === undefined) {
      throw new Error(
        `the template refers to ${JSON.stringify(reference)}, not one of its resources`,
      );
    }
    return resource.Properties ?? {};
  }
}

function managed<T>(table: Readonly<Record<string, T>>, id: string, kind: string): T {
  const policy = table[id];
  if (policy === undefined) throw new Error(`managed ${kind} policy ${id} is not emulated`);
  return policy;
}

function items<B extends string>(
  config: unknown,
  behaviorKey: string,
  itemsKey: string,
  lowerCase: boolean,
): ItemsConfig<B> {
  const json = (config ?? {}) as Json;
  const list = ((json[itemsKey] ?? []) as unknown[]).map(String);
  return {
    behavior: (typeof json[behaviorKey] === 'string' ? json[behaviorKey] : 'none') as B,
    items: lowerCase ? list.map((item) => item.toLowerCase()) : list,
  };
}

/** A policy's name; a name joined from tokens (stack and region) is kept as far as it is text. */
function nameOf(name: unknown): string {
  if (typeof name === 'string') return name;
  const joined = (name as { 'Fn::Join'?: [string, unknown[]] } | undefined)?.['Fn::Join'];
  if (joined === undefined) return '(unnamed)';
  return joined[1].map((part) => (typeof part === 'string' ? part : '*')).join(joined[0]);
}
