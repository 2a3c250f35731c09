/**
 * The pages on a distribution the user brings (`distribution`, `pathPattern`; issue 24): the
 * service adds behaviours, origins, its viewer-request function, policies and the cache-tag
 * header to it, and leaves what it did not create (the default behaviour, certificate, WAF,
 * logging, the user's behaviours and their functions) as it is.
 */
import { Stack } from 'aws-cdk-lib';
import type { CfnDistribution, Distribution } from 'aws-cdk-lib/aws-cloudfront';
import { Function as CloudFrontFunction, type BehaviorOptions } from 'aws-cdk-lib/aws-cloudfront';
import type { Construct, IConstruct } from 'constructs';
import { enableCacheTags } from './isr-cdn.js';
import { addUpstreamBehaviours, type UpstreamBehaviours } from './isr-routing.js';
import { IsrServiceConfigError } from './isr-settings.js';

export interface ExistingDistributionPages {
  readonly distribution: Distribution;
  readonly pathPattern: string;
  /** The pages' behaviour (`pageBehaviour` in isr-cdn.ts). */
  readonly pages: BehaviorOptions;
  readonly cacheTagHeader: string;
  /** With an upstream: its static and bypass behaviours, before the pages'. */
  readonly upstream: UpstreamBehaviours | undefined;
  /** Key rules' behaviours on the pages' origin (`keyRuleBehaviours`), before the pages'. */
  readonly keyBehaviours?: Readonly<Record<string, BehaviorOptions>> | undefined;
}

/** The service each distribution already carries: CacheTagConfig holds one header. */
const servicesByDistribution = new WeakMap<Distribution, string>();

/**
 * Adds the upstream's behaviours, then the pages' (CloudFront takes the first match, and the
 * user's own come before both), then the cache-tag header. Synth fails when a behaviour the
 * service adds has the path pattern of one the distribution has: a behaviour takes one
 * viewer-request function, and the service's must route its requests.
 */
export function addPagesToDistribution(scope: Construct, input: ExistingDistributionPages) {
  const { distribution } = input;
  refuseForeignDistribution(scope, distribution);
  const upstream =
    input.upstream === undefined
      ? undefined
      : addUpstreamBehaviours(scope, distribution, input.upstream);
  const keyed = Object.entries(input.keyBehaviours ?? {});
  for (const [pattern, behaviour] of keyed) {
    distribution.addBehavior(pattern, behaviour.origin, behaviour);
  }
  distribution.addBehavior(input.pathPattern, input.pages.origin, input.pages);
  enableCacheTags(distribution, input.cacheTagHeader);
  const patterns = [
    ...(input.upstream?.staticPrefixes.map((prefix) => `${prefix}*`) ?? []),
    ...(input.upstream?.bypassPaths.map((path) => path.replace(/\*\*/g, '*')) ?? []),
    ...keyed.map(([pattern]) => pattern),
    input.pathPattern,
  ];
  scope.node.addValidation({ validate: () => sharedBehaviourProblems(distribution, patterns) });
  return { staticCachePolicy: upstream?.staticCachePolicy };
}

/** Another stack would make a cycle (its purge names the distribution, its behaviours the origin). */
function refuseForeignDistribution(scope: Construct, distribution: Distribution): void {
  const [service, owner] = [Stack.of(scope), Stack.of(distribution)];
  if (service !== owner) {
    throw new IsrServiceConfigError(
      `IsrService ${scope.node.path}: distribution ${distribution.node.path} is in stack ${owner.stackName}, the service in ${service.stackName}; create the service in the distribution's stack, since each refers to the other`,
    );
  }
  const other = servicesByDistribution.get(distribution);
  if (other !== undefined) {
    throw new IsrServiceConfigError(
      `IsrService ${scope.node.path}: distribution ${distribution.node.path} already carries ${other}; one service per distribution (it holds one cache-tag header)`,
    );
  }
  servicesByDistribution.set(distribution, scope.node.path);
}

interface RenderedBehaviour {
  readonly pathPattern: string;
  readonly functionAssociations?: { eventType: string; functionArn: unknown }[];
}

/** Path patterns the service adds that another behaviour of the distribution also has. */
export function sharedBehaviourProblems(
  distribution: Distribution,
  patterns: readonly string[],
): string[] {
  const stack = Stack.of(distribution);
  const config = stack.resolve(
    (distribution.node.defaultChild as CfnDistribution).distributionConfig,
  ) as {
    cacheBehaviors?: RenderedBehaviour[];
  };
  const behaviours = config.cacheBehaviors ?? [];
  return [...new Set(patterns)].flatMap((pattern) => {
    const same = behaviours.filter((behaviour) => behaviour.pathPattern === pattern);
    if (same.length < 2) return [];
    const functions = same
      .flatMap((behaviour) => behaviour.functionAssociations ?? [])
      .filter((association) => association.eventType === 'viewer-request')
      .map((association) => functionPathOf(stack, association.functionArn));
    return [
      `the distribution already has a behaviour '${pattern}' (viewer-request functions: ${functions.join(', ') || 'none'}): a behaviour takes one viewer-request function and the service's routes its requests; remove that behaviour, or choose another pathPattern, staticPrefixes or bypassPaths`,
    ];
  });
}

/** The construct path of the CloudFront Function whose ARN resolves to `arn`, for the message. */
function functionPathOf(stack: Stack, arn: unknown): string {
  const wanted = JSON.stringify(arn);
  const match = stack.node
    .findAll()
    .find(
      (node: IConstruct) =>
        node instanceof CloudFrontFunction &&
        JSON.stringify(stack.resolve(node.functionArn)) === wanted,
    );
  return match?.node.path ?? wanted;
}
