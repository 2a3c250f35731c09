/**
 * The pages on a distribution the user brings: what the service adds to it (behaviours,
 * origins, its viewer-request function, policies, cache tags, the purge), what it leaves as it
 * is (the default behaviour, the user's behaviours and their functions, cdk-nag findings), and
 * what synth refuses, each refusal checked by a case that passes without the guard's trigger.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import {
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  type BehaviorOptions,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { AccountRootPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CDN_DISTRIBUTION_ID_ENV } from '../../lambda/shared/cdn-env.js';
import { IsrService, type IsrServiceProps } from '../../lib/isr-service.js';
import { cdkJsonContext, logicalIdOf, synthIsrStack } from './stack-fixture.js';

const ROUTED: IsrServiceProps = {
  renderOriginUrl: 'https://ssr.example.com',
  staticPrefixes: ['/_next/static/'],
  bypassPaths: ['/api/**'],
};

/** A site's stack: its distribution, its own viewer-request function on the default behaviour. */
function siteStack(extra: (stack: Stack, fn: CloudFrontFunction) => BehaviorOptions[] = () => []) {
  const app = new App({ context: cdkJsonContext() });
  const stack = new Stack(app, 'Site');
  const siteFunction = new CloudFrontFunction(stack, 'SiteRedirects', {
    code: FunctionCode.fromInline('function handler(event) { return event.request; }'),
  });
  const functionAssociations = [
    { function: siteFunction, eventType: FunctionEventType.VIEWER_REQUEST },
  ];
  const distribution = new Distribution(stack, 'Site', {
    defaultBehavior: { origin: new HttpOrigin('www.example.com'), functionAssociations },
    additionalBehaviors: { '/assets/*': { origin: new HttpOrigin('assets.example.com') } },
  });
  extra(stack, siteFunction).forEach((options, index) =>
    distribution.addBehavior(index === 0 ? '/blog/*' : `/extra${index}/*`, options.origin, options),
  );
  return { app, stack, distribution, siteFunction };
}

interface Behaviour {
  PathPattern?: string;
  TargetOriginId: string;
  FunctionAssociations?: { EventType: string; FunctionARN: unknown }[];
  [key: string]: unknown;
}
interface DistributionConfig {
  DefaultCacheBehavior: Behaviour;
  CacheBehaviors: Behaviour[];
  Origins: { Id: string; DomainName: unknown; OriginAccessControlId?: unknown }[];
  CacheTagConfig?: { HeaderName: string };
}

const configOf = (template: Template, logicalId: string) =>
  (
    template.toJSON() as {
      Resources: Record<string, { Properties: { DistributionConfig: DistributionConfig } }>;
    }
  ).Resources[logicalId].Properties.DistributionConfig;

const functionArnOf = (fn: CloudFrontFunction) => ({
  'Fn::GetAtt': [logicalIdOf(fn), 'FunctionARN'],
});

describe('IsrService on an existing distribution', () => {
  let site: ReturnType<typeof siteStack>;
  let service: IsrService;
  let template: Template;
  let config: DistributionConfig;

  beforeAll(() => {
    site = siteStack();
    service = new IsrService(site.stack, 'Isr', {
      ...ROUTED,
      distribution: site.distribution,
      pathPattern: '/blog/*',
    });
    service.grantRevalidate(new Role(site.stack, 'Cms', { assumedBy: new AccountRootPrincipal() }));
    template = Template.fromStack(site.stack);
    config = configOf(template, logicalIdOf(site.distribution));
  });

  it('creates no distribution of its own: its distribution is the one given', () => {
    template.resourceCountIs('AWS::CloudFront::Distribution', 1);
    expect(service.distribution).toBe(site.distribution);
  });

  it("leaves the default behaviour, and the user's function on it, as they were", () => {
    expect(config.DefaultCacheBehavior.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: functionArnOf(site.siteFunction) },
    ]);
    const siteOrigin = config.Origins.find((origin) => origin.DomainName === 'www.example.com');
    expect(config.DefaultCacheBehavior.TargetOriginId).toBe(siteOrigin?.Id);
  });

  it("adds static, bypass, then pages' behaviours after the user's, in the order the rules test them", () => {
    expect(config.CacheBehaviors.map((behaviour) => behaviour.PathPattern)).toEqual([
      '/assets/*',
      '/_next/static/*',
      '/api/*',
      '/blog/*',
    ]);
  });

  it("gives the pages' behaviour the function URL origin, the service's policies and function", () => {
    const pages = config.CacheBehaviors.find((behaviour) => behaviour.PathPattern === '/blog/*');
    const origin = config.Origins.find((candidate) => candidate.Id === pages?.TargetOriginId);
    expect(origin?.OriginAccessControlId).toBeDefined();
    expect(JSON.stringify(origin?.DomainName)).toContain(logicalIdOf(service.functionUrl));
    expect(pages).toMatchObject({
      CachePolicyId: { Ref: logicalIdOf(service.cachePolicy) },
      OriginRequestPolicyId: { Ref: logicalIdOf(service.originRequestPolicy) },
      ResponseHeadersPolicyId: { Ref: expect.stringMatching(/^IsrPageResponseHeadersPolicy/) },
      ViewerProtocolPolicy: 'redirect-to-https',
      FunctionAssociations: [
        { EventType: 'viewer-request', FunctionARN: functionArnOf(service.viewerRequestFunction!) },
      ],
    });
    expect((pages?.AllowedMethods as string[]).length).toBe(7);
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        RemoveHeadersConfig: { Items: [{ Header: 'x-isr-cache-tags' }] },
      }),
    });
  });

  it('adds the upstream origin, which the function selects by id', () => {
    expect(config.Origins.map((origin) => origin.Id)).toContain('isr-upstream');
  });

  it('turns on cache tags on the given distribution', () => {
    expect(config.CacheTagConfig).toEqual({ HeaderName: 'x-isr-cache-tags' });
  });

  it('lets CloudFront invoke the origin only from the given distribution', () => {
    const permissions = template.findResources('AWS::Lambda::Permission', {
      Properties: { Principal: 'cloudfront.amazonaws.com' },
    });
    for (const permission of Object.values(permissions)) {
      expect(
        JSON.stringify((permission as { Properties: { SourceArn: unknown } }).Properties.SourceArn),
      ).toContain(logicalIdOf(site.distribution));
    }
    expect(Object.keys(permissions).length).toBeGreaterThan(0);
  });

  it('purges the given distribution, and grantRevalidate and the outputs keep working', () => {
    const id = { Ref: logicalIdOf(site.distribution) };
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [CDN_DISTRIBUTION_ID_ENV]: id }) },
    });
    expect(site.stack.resolve(service.distribution.distributionId)).toEqual(id);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^Cms') }],
      PolicyDocument: {
        // Both actions AWS requires of a function URL caller (isr-revalidate.test.ts, fix 6).
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 'lambda:InvokeFunctionUrl' }),
          Match.objectLike({ Action: 'lambda:InvokeFunction' }),
        ]),
      },
    });
  });

  it("acknowledges no cdk-nag finding of the user's distribution, and has none of its own", () => {
    const checks = new AwsSolutionsChecks();
    expect(checks.validateScope(service).violations).toEqual([]);
    const own = checks.validateScope(site.distribution).violations.map((v) => v.ruleName);
    // Negative control: the distribution's findings are there, the user's to answer.
    expect(own).toEqual(expect.arrayContaining(['AwsSolutions-CFR1', 'AwsSolutions-CFR4']));
  });
});

describe('IsrService with its own distribution (the default)', () => {
  it('creates one, the pages on its default behaviour with its policies and cache tags', () => {
    const { service, template } = synthIsrStack({ service: ROUTED });
    const config = configOf(template, logicalIdOf(service.distribution));
    template.resourceCountIs('AWS::CloudFront::Distribution', 1);
    expect(config.DefaultCacheBehavior).toMatchObject({
      CachePolicyId: { Ref: logicalIdOf(service.cachePolicy) },
      FunctionAssociations: [
        { EventType: 'viewer-request', FunctionARN: functionArnOf(service.viewerRequestFunction!) },
      ],
    });
    expect(config.CacheBehaviors.map((behaviour) => behaviour.PathPattern)).toEqual([
      '/_next/static/*',
      '/api/*',
    ]);
    expect(config.CacheTagConfig).toEqual({ HeaderName: 'x-isr-cache-tags' });
  });
});

describe('what synth refuses with an existing distribution', () => {
  const build = (props: (site: ReturnType<typeof siteStack>) => IsrServiceProps) => {
    const site = siteStack();
    return () => new IsrService(site.stack, 'Isr', props(site));
  };

  it('refuses an imported distribution, and takes one of the stack (control)', () => {
    const imported = build((site) => ({
      distribution: Distribution.fromDistributionAttributes(site.stack, 'Imported', {
        distributionId: 'E123',
        domainName: 'd123.cloudfront.net',
      }),
      pathPattern: '/blog/*',
    }));
    expect(imported).toThrow(
      /distribution Site\/Imported is imported: CloudFormation can change only/,
    );
    expect(
      build((site) => ({ distribution: site.distribution, pathPattern: '/blog/*' })),
    ).not.toThrow();
  });

  it('needs pathPattern with distribution and only with it, rooted at /', () => {
    expect(build((site) => ({ distribution: site.distribution }))).toThrow(
      /distribution needs pathPattern/,
    );
    expect(build(() => ({ pathPattern: '/blog/*' }))).toThrow(/pathPattern needs distribution/);
    expect(build((site) => ({ distribution: site.distribution, pathPattern: '*' }))).toThrow(
      /pathPattern must be a CloudFront path pattern starting with \//,
    );
    // Control: '/*' takes every path the user's own behaviours leave.
    expect(build((site) => ({ distribution: site.distribution, pathPattern: '/*' }))).not.toThrow();
  });

  it("refuses the props that configure a whole distribution: they are the user's", () => {
    expect(
      build((site) => ({
        distribution: site.distribution,
        pathPattern: '/blog/*',
        webAclId: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/x/1',
        domainNames: ['www.example.com'],
      })),
    ).toThrow(/domainNames, webAclId configure the service's own distribution/);
  });

  it('refuses a distribution of another stack, and a second service on one distribution', () => {
    const site = siteStack();
    const other = new Stack(site.app, 'Other');
    const props = { distribution: site.distribution, pathPattern: '/blog/*' };
    expect(() => new IsrService(other, 'Isr', props)).toThrow(
      /is in stack Site, the service in Other; create the service in the distribution's stack/,
    );
    new IsrService(site.stack, 'Isr', props);
    expect(() => new IsrService(site.stack, 'Isr2', { ...props, pathPattern: '/news/*' })).toThrow(
      /already carries Site\/Isr; one service per distribution/,
    );
  });

  it("refuses a behaviour the distribution already has, naming the user's function on it", () => {
    const taken = siteStack((_stack, fn) => [
      {
        origin: new HttpOrigin('legacy.example.com'),
        functionAssociations: [{ function: fn, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
    ]);
    new IsrService(taken.stack, 'Isr', {
      distribution: taken.distribution,
      pathPattern: '/blog/*',
    });
    expect(() => Template.fromStack(taken.stack)).toThrow(
      /already has a behaviour '\/blog\/\*' \(viewer-request functions: Site\/SiteRedirects\)/,
    );
    // Control: the same distribution with the pages on a free pattern synthesizes.
    const free = siteStack((_stack, fn) => [
      {
        origin: new HttpOrigin('legacy.example.com'),
        functionAssociations: [{ function: fn, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
    ]);
    new IsrService(free.stack, 'Isr', { distribution: free.distribution, pathPattern: '/news/*' });
    expect(() => Template.fromStack(free.stack)).not.toThrow();
  });
});
