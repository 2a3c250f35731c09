/**
 * Names for resources that are global to the account (CloudFront policies and origin access
 * controls) or unique per account and region (log delivery). CDK derives its default names
 * from the construct path, which is the same for the same stack in two regions, so a second
 * region or stage in one account would collide; these names carry the stack name and region.
 */
import { createHash } from 'node:crypto';
import { Aws, Stack, Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Longest region name in use (e.g. `ap-southeast-4` is 14), with room to spare. */
const MAX_REGION_LENGTH = 16;
const HASH_LENGTH = 8;

/**
 * `<stack name>-<region>-<suffix>` within `maxLength`: a long stack name is cut and completed
 * with a hash of the whole name, so two long names still differ. An unresolved region (an
 * environment-agnostic stack) becomes `AWS::Region` at deploy.
 */
export function stackRegionName(scope: IConstruct, suffix: string, maxLength: number): string {
  const stack = Stack.of(scope);
  const regionKnown = !Token.isUnresolved(stack.region);
  const region = regionKnown ? stack.region : Aws.REGION;
  let base = stack.stackName;
  if (!Token.isUnresolved(base)) {
    const room = maxLength - (regionKnown ? region.length : MAX_REGION_LENGTH) - suffix.length - 2;
    if (base.length > room) {
      const hash = createHash('sha256').update(base).digest('hex').slice(0, HASH_LENGTH);
      base = `${base.slice(0, Math.max(room - HASH_LENGTH, 1))}${hash}`;
    }
  }
  return `${base}-${region}-${suffix}`;
}
