import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, jest } from '@jest/globals';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { GeoRestriction, VpcOriginEndpoint } from 'aws-cdk-lib/aws-cloudfront';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { ApplicationLoadBalancer } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { IsrService, type IsrServiceProps } from '../../lib/isr-service.js';
import { cdkJsonContext, synthIsrStack } from './stack-fixture.js';

/** Rule ids acknowledged anywhere under `scope`, with their reasons. */
function acknowledgements(scope: IConstruct): Map<string, string> {
  const found = new Map<string, string>();
  for (const node of scope.node.findAll()) {
    for (const entry of node.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.set(id.replace(/^annotation::/i, ''), reason);
      }
    }
  }
  return found;
}

/** The findings the default stack acknowledges, each with its reason, and would report otherwise. */
const ACKNOWLEDGED = [
  'AwsSolutions-CFR1',
  'AwsSolutions-CFR2',
  'AwsSolutions-CFR3',
  'AwsSolutions-CFR4',
  'AwsSolutions-IAM5[Resource::<IsrBodiesF2E2F209.Arn>/pages/*]',
  'AwsSolutions-L1',
  'AwsSolutions-S1',
];

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged error or warning', () => {
    const { stack } = synthIsrStack();
    const report = new AwsSolutionsChecks().validateScope(stack);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('passes as a synth plugin, the way bin/isr.ts runs it', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'isr-nag-'));
    const { app, stack } = synthIsrStack({ outdir });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth({ force: true })).not.toThrow();
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: unknown[] }[];
    };
    const nag = report.pluginReports.filter((plugin) => plugin.pluginName.includes('AwsSolutions'));
    expect(nag.flatMap((plugin) => plugin.violations)).toEqual([]);
    expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('reports nothing new when the edge routes to an upstream (behaviours, function, secret header, VPC origin)', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Routed');
    const vpc = new Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0 });
    const alb = new ApplicationLoadBalancer(stack, 'Upstream', { vpc, internetFacing: false });
    const service = new IsrService(stack, 'Isr', {
      renderOriginUrl: 'https://ssr.internal.example.com',
      upstreamSecret: new Secret(stack, 'UpstreamSecret'),
      upstreamVpcOrigin: VpcOriginEndpoint.applicationLoadBalancer(alb),
      staticPrefixes: ['/_next/static/'],
      bypassPaths: ['/api/**'],
      bypassCookies: ['__prerender_bypass'],
    });
    Template.fromStack(stack);
    const report = new AwsSolutionsChecks().validateScope(service);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
    expect([...acknowledgements(service).keys()].sort()).toEqual(ACKNOWLEDGED);
  });

  it('reports nothing for the revalidate endpoint in HMAC mode (URL without IAM auth)', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Webhooks');
    const service = new IsrService(stack, 'Isr', {
      revalidateWebhookSecret: new Secret(stack, 'WebhookKey'),
    });
    Template.fromStack(stack); // synthesized, as the other checks are
    const report = new AwsSolutionsChecks().validateScope(service);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });

  it('fails the synth on a finding nobody acknowledged (negative control)', () => {
    const ignore = jest.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => {});
    const outdir = mkdtempSync(join(tmpdir(), 'isr-nag-'));
    try {
      const { app } = synthIsrStack({ outdir });
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      expect(() => app.synth({ force: true })).toThrow(/AwsSolutions-S1/);
    } finally {
      ignore.mockRestore();
    }
  });

  it('gives every acknowledgement a specific reason', () => {
    const { service } = synthIsrStack();
    const acks = acknowledgements(service);
    expect([...acks.keys()].sort()).toEqual(ACKNOWLEDGED);
    for (const reason of acks.values()) expect(reason.length).toBeGreaterThan(40);
  });

  it('needs no acknowledgement for what the props fix (negative control)', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Hardened');
    const logs = new Bucket(stack, 'AccessLogs', {
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
    });
    const service = new IsrService(stack, 'Isr', {
      accessLogsBucket: logs,
      domainNames: ['pages.example.com'],
      certificate: Certificate.fromCertificateArn(
        stack,
        'Cert',
        'arn:aws:acm:us-east-1:123456789012:certificate/abc',
      ),
      webAclId: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/isr/abc',
      geoRestriction: GeoRestriction.allowlist('DE', 'FR'),
    });
    const acks = acknowledgements(service);
    for (const rule of ['S1', 'CFR1', 'CFR2', 'CFR3', 'CFR4']) {
      expect(acks.has(`AwsSolutions-${rule}`)).toBe(false);
    }
    expect(new AwsSolutionsChecks().validateScope(service).violations).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('would report the findings without the acknowledgements', () => {
    const ignore = jest.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => {});
    let rules: string[];
    try {
      const { service } = synthIsrStack();
      rules = new AwsSolutionsChecks()
        .validateScope(service)
        .violations.map((violation) => violation.ruleName);
    } finally {
      ignore.mockRestore();
    }
    expect(rules.sort()).toEqual(ACKNOWLEDGED);
  });

  it('states true reasons: no CloudTrail claim, no ACL claim, no GET/HEAD excuse', () => {
    const acks = acknowledgements(synthIsrStack().service);
    expect(acks.get('AwsSolutions-S1')).toMatch(/only when a trail enables data events/);
    expect(acks.get('AwsSolutions-S1')).not.toMatch(/CloudTrail records them/);
    expect(acks.get('AwsSolutions-CFR3')).toMatch(/cdnLogs for standard logging v2/);
    expect(acks.get('AwsSolutions-CFR3')).not.toMatch(/need an ACL-enabled log bucket/);
    expect(acks.get('AwsSolutions-CFR2')).toMatch(/rateLimitPerFiveMinutes/);
    expect(acks.get('AwsSolutions-CFR2')).not.toMatch(/GET\/HEAD/);
  });

  describe('with the hardening props', () => {
    /** A service in us-east-1 built with `props(stack)`, its acknowledgements and its findings. */
    function hardened(props: (stack: Stack) => IsrServiceProps) {
      const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
      const stack = new Stack(app, 'Hardened', {
        env: { account: '123456789012', region: 'us-east-1' },
      });
      const service = new IsrService(stack, 'Isr', props(stack));
      const violations = new AwsSolutionsChecks()
        .validateScope(service)
        .violations.map((violation) => violation.ruleName);
      return { acks: acknowledgements(service), violations, stack };
    }

    it('needs no WAF acknowledgement with a rate limit', () => {
      const { acks, violations } = hardened(() => ({ rateLimitPerFiveMinutes: 2000 }));
      expect(acks.has('AwsSolutions-CFR2')).toBe(false);
      expect(violations).toEqual([]);
    });

    it('acknowledges CFR3 with the true reason when standard logging v2 is on', () => {
      const { acks, violations } = hardened((stack) => ({
        cdnLogs: { logGroup: new LogGroup(stack, 'CdnLogs') },
      }));
      expect(acks.get('AwsSolutions-CFR3')).toMatch(/Standard logging v2 is on/);
      expect(violations).toEqual([]);
    });

    it('would report CFR3 with logging v2 on: the rule only sees legacy logging', () => {
      const ignore = jest.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => {});
      try {
        const { violations } = hardened((stack) => ({
          cdnLogs: { logGroup: new LogGroup(stack, 'CdnLogs') },
        }));
        expect(violations).toContain('AwsSolutions-CFR3');
      } finally {
        ignore.mockRestore();
      }
    });

    it('acknowledges the network-interface wildcard only in a VPC, and stays green', () => {
      const { acks, violations } = hardened((stack) => ({ vpc: new Vpc(stack, 'Vpc') }));
      expect(acks.get('AwsSolutions-IAM5[Resource::*]')).toMatch(/VPC placement/);
      expect(violations).toEqual([]);
      expect(acknowledgements(synthIsrStack().service).has('AwsSolutions-IAM5[Resource::*]')).toBe(
        false,
      );
    });

    it('stays green with an upstream secret', () => {
      const { violations } = hardened((stack) => ({
        renderOriginUrl: 'https://ssr.example.com',
        upstreamSecret: new Secret(stack, 'Upstream'),
      }));
      expect(violations).toEqual([]);
    });
  });
});
