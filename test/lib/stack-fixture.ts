/**
 * Builds the stack the way `cdk synth` does (the feature flags of cdk.json), with the prebuilt
 * function bundles (copied into the assembly only when a test names an `outdir`), and reads IAM
 * policies out of the template for boundary assertions.
 */
import { readFileSync } from 'node:fs';
import { App, Stack, type Environment } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { IsrService } from '../../lib/isr-service.js';
import type { IsrServiceProps } from '../../lib/isr-service-props.js';
import { IsrStack } from '../../lib/isr-stack.js';

/**
 * The context `cdk synth --no-staging` would pass: the feature flags in cdk.json, and assets
 * left where they are (the prebuilt bundles are not copied into every test's assembly).
 */
export const cdkJsonContext = (): Record<string, unknown> => ({
  ...(
    JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
      context: Record<string, unknown>;
    }
  ).context,
  'aws:cdk:disable-asset-staging': true,
});

export interface FixtureOptions {
  readonly service?: IsrServiceProps;
  /** Extra context, e.g. `{ tenantHeader: 'x-tenant' }` as `-c` would set it. */
  readonly context?: Record<string, unknown>;
  /**
   * Where the assembly goes, assets staged (copied) into it as `cdk synth` does.
   * @default - a temporary directory, and assets are not copied (8 MB less per synth)
   */
  readonly outdir?: string;
  /** Changes made to the built service before it is synthesized (e.g. a negative control). */
  readonly alter?: (service: IsrService) => void;
  /** @default 'IsrTest' */
  readonly stackName?: string;
  /** @default - environment-agnostic */
  readonly env?: Environment;
}

export function synthIsrStack(options: FixtureOptions = {}) {
  const app = new App({
    outdir: options.outdir,
    context: {
      ...cdkJsonContext(),
      'aws:cdk:disable-asset-staging': options.outdir === undefined,
      ...options.context,
    },
  });
  const stack = new IsrStack(app, options.stackName ?? 'IsrTest', {
    service: options.service,
    env: options.env,
  });
  options.alter?.(stack.service);
  return { app, stack, service: stack.service, template: Template.fromStack(stack) };
}

export const logicalIdOf = (construct: IConstruct): string =>
  Stack.of(construct).getLogicalId((construct.node.defaultChild ?? construct) as CfnElement);

export interface PolicyStatementJson {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

/**
 * Every statement a role can use: inline policies of the role and every AWS::IAM::Policy or
 * ManagedPolicy attached to it. AWS managed policies (by ARN) are returned separately, since
 * their statements are not in the template.
 */
export function policyStatementsOf(template: Template, roleLogicalId: string) {
  const resources = template.toJSON().Resources as Record<
    string,
    { Type: string; Properties?: Record<string, unknown> }
  >;
  const role = resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleLogicalId} is not a role`);
  const refersToRole = (value: unknown) =>
    Array.isArray(value) &&
    value.some((item) => JSON.stringify(item) === JSON.stringify({ Ref: roleLogicalId }));

  const documents: { Statement: PolicyStatementJson[] }[] = [];
  for (const inline of (role.Properties?.Policies ?? []) as { PolicyDocument: never }[]) {
    documents.push(inline.PolicyDocument);
  }
  for (const resource of Object.values(resources)) {
    const isPolicy =
      resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy';
    if (isPolicy && refersToRole(resource.Properties?.Roles)) {
      documents.push(resource.Properties?.PolicyDocument as { Statement: PolicyStatementJson[] });
    }
  }
  const managedPolicyArns = (role.Properties?.ManagedPolicyArns ?? []) as unknown[];
  return {
    statements: documents.flatMap((document) => document.Statement),
    managedPolicyArns,
  };
}

export const actionsOf = (statement: PolicyStatementJson): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

export const resourcesOf = (statement: PolicyStatementJson): unknown[] =>
  Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];

/** All allowed actions of a role, for "never has X" assertions. */
export const allowedActionsOf = (template: Template, roleLogicalId: string): string[] =>
  policyStatementsOf(template, roleLogicalId)
    .statements.filter((statement) => statement.Effect === 'Allow')
    .flatMap(actionsOf);

const escapeRegExp = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** Whether any of these IAM action patterns (`s3:*`, `s3:Delete*`, ...) covers `action`. */
export const coversAction = (patterns: readonly string[], action: string): boolean =>
  patterns.some((pattern) =>
    new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`, 'i').test(action),
  );

/** The Properties of an AWS::Lambda::Function the tests read. */
export interface LambdaProperties {
  Environment: { Variables: Record<string, unknown> };
  Timeout: number;
}

export interface ResourceJson<P> {
  readonly Type: string;
  readonly Properties: P;
  readonly DeletionPolicy?: string;
}

/** One resource of the template by logical ID, typed as the caller reads it. */
export function resourceOf<P = Record<string, unknown>>(
  template: Template,
  logicalId: string,
): ResourceJson<P> {
  const resources = (template.toJSON() as { Resources: Record<string, ResourceJson<P>> }).Resources;
  const resource = resources[logicalId];
  if (resource === undefined) throw new Error(`no resource ${logicalId} in the template`);
  return resource;
}

export const getAtt = (logicalId: string, attribute: string) => ({
  'Fn::GetAtt': [logicalId, attribute],
});

/** Logical IDs of the service's main resources, for references in assertions. */
export const serviceIds = (service: IsrService) => ({
  table: logicalIdOf(service.table),
  bucket: logicalIdOf(service.bucket),
  queue: logicalIdOf(service.queue),
  dlq: logicalIdOf(service.deadLetterQueue),
  origin: logicalIdOf(service.originFunction),
  worker: logicalIdOf(service.workerFunction),
  originRole: logicalIdOf(service.originRole),
  workerRole: logicalIdOf(service.workerRole),
  functionUrl: logicalIdOf(service.functionUrl),
  distribution: logicalIdOf(service.distribution),
  cachePolicy: logicalIdOf(service.cachePolicy),
  originRequestPolicy: logicalIdOf(service.originRequestPolicy),
});

/** A distribution's ARN as the template spells it, from its logical ID. */
export const distributionArnOf = (distributionId: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':cloudfront::',
      { Ref: 'AWS::AccountId' },
      ':distribution/',
      { Ref: distributionId },
    ],
  ],
});
