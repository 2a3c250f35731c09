/**
 * An optional AWS WAF web ACL in front of the distribution: one rate-based rule per client IP,
 * so a single client cannot flood the origin (and through it, the upstream renderer).
 */
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { requireUsEast1 } from './isr-region.js';

/** WAF counts requests over this window; the limit is per client IP per window. */
export const RATE_LIMIT_WINDOW_SECONDS = 300;

/**
 * A CLOUDFRONT-scope web ACL that allows everything except clients over `limit` requests in
 * 5 minutes, which are blocked until their rate falls. Metrics and sampled requests are on, so
 * blocks are visible in CloudWatch. CloudFormation names the ACL, so stacks never collide.
 */
export function createRateLimitWebAcl(scope: Construct, limit: number): CfnWebACL {
  requireUsEast1(scope, 'WebAclRegion', 'rateLimitPerFiveMinutes (a CLOUDFRONT-scope web ACL)');
  const visibility = (metricName: string) => ({
    cloudWatchMetricsEnabled: true,
    metricName,
    sampledRequestsEnabled: true,
  });
  return new CfnWebACL(scope, 'WebAcl', {
    scope: 'CLOUDFRONT',
    description: 'ISR pages: per-client-IP rate limit',
    defaultAction: { allow: {} },
    visibilityConfig: visibility('IsrWebAcl'),
    rules: [
      {
        name: 'RateLimitPerClientIp',
        priority: 0,
        action: { block: {} },
        statement: {
          rateBasedStatement: {
            limit,
            aggregateKeyType: 'IP',
            evaluationWindowSec: RATE_LIMIT_WINDOW_SECONDS,
          },
        },
        visibilityConfig: visibility('IsrRateLimitPerClientIp'),
      },
    ],
  });
}
