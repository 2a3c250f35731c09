/**
 * CloudFront lives in us-east-1: its metrics, CLOUDFRONT-scope web ACLs and its log delivery
 * source exist only there. What needs them is refused at synth for a stack known to be in
 * another region, and asserted at deploy for an environment-agnostic one.
 */
import { Aws, CfnCondition, CfnRule, Fn, Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { IsrServiceConfigError } from './isr-settings.js';

export const CLOUDFRONT_REGION = 'us-east-1';

/** Where the stack is, as far as synth knows. */
export function stackRegion(scope: Construct): 'us-east-1' | 'elsewhere' | 'unknown' {
  const region = Stack.of(scope).region;
  if (Token.isUnresolved(region)) return 'unknown';
  return region === CLOUDFRONT_REGION ? 'us-east-1' : 'elsewhere';
}

/**
 * Fails synth when the stack is known to be outside us-east-1; for an environment-agnostic
 * stack, adds a template rule so CloudFormation refuses the deploy elsewhere, before creating
 * anything, with the same explanation.
 */
export function requireUsEast1(scope: Construct, id: string, feature: string): void {
  const where = stackRegion(scope);
  const explanation =
    `${feature} needs the stack in ${CLOUDFRONT_REGION} (CloudFront's region); deploy the ` +
    'stack there, or set it up outside the stack (e.g. pass webAclId)';
  if (where === 'elsewhere') {
    throw new IsrServiceConfigError(`IsrService: ${explanation}, not ${Stack.of(scope).region}`);
  }
  if (where === 'unknown') {
    new CfnRule(scope, id, {
      assertions: [
        {
          assert: Fn.conditionEquals(Aws.REGION, CLOUDFRONT_REGION),
          assertDescription: explanation,
        },
      ],
    });
  }
}

/** True at deploy in us-east-1: guards resources that only work there (CloudFront alarms). */
export function inUsEast1Condition(scope: Construct, id: string): CfnCondition {
  return new CfnCondition(scope, id, {
    expression: Fn.conditionEquals(Aws.REGION, CLOUDFRONT_REGION),
  });
}
