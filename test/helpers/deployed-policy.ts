/**
 * A function's synthesized role policy with its references resolved to the local stand-ins the
 * bundle test runs against (the same table, bucket and queues the recorded calls name), so IAM's
 * evaluation (`iam-policy.ts`) can be asked about each call the bundle made.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { policyStatementsOf } from '../lib/stack-fixture.js';
import type { ArnScope } from './aws-calls.js';
import { LOCAL_REFERENCES, type LocalResources } from './deployed-bundle.js';
import { resolveValue, TEST_ACCOUNT, type Statement } from './iam-policy.js';

interface ResourceJson {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

interface KeySchemaJson {
  readonly KeySchema: { AttributeName: string; KeyType: string }[];
  readonly IndexName?: string;
}

const hashOf = (schema: KeySchemaJson) =>
  schema.KeySchema.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '';

/** The local value each function's environment gives a reference, by logical ID. */
function localValues(resources: Record<string, ResourceJson>, local: LocalResources) {
  const values: Record<string, string> = {};
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const variables = ((resource.Properties?.Environment ?? {}) as { Variables?: object })
      .Variables;
    for (const [name, value] of Object.entries(variables ?? {})) {
      const reference = LOCAL_REFERENCES[name];
      const id = (value as { Ref?: string }).Ref;
      if (reference !== undefined && id !== undefined) values[id] = reference(local);
    }
  }
  return values;
}

/**
 * Every `Ref` and `Fn::GetAtt` the template's policies use, as the local run sees them: the
 * table, bucket and queues by their local names, anything else by a name no call uses.
 */
export function localReferences(template: Template, local: LocalResources) {
  const resources = template.toJSON().Resources as Record<string, ResourceJson>;
  const values = localValues(resources, local);
  const { region, accountId } = TEST_ACCOUNT;
  const refs: Record<string, string> = {};
  const hashKeys: Record<string, string> = {};
  for (const [id, resource] of Object.entries(resources)) {
    const local = values[id];
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable': {
        const name = local ?? id;
        refs[id] = name;
        refs[`${id}.Arn`] = `arn:aws:dynamodb:${region}:${accountId}:table/${name}`;
        const table = resource.Properties as unknown as KeySchemaJson & {
          GlobalSecondaryIndexes?: KeySchemaJson[];
        };
        hashKeys[name] = hashOf(table);
        for (const index of table.GlobalSecondaryIndexes ?? []) {
          hashKeys[`${name}/index/${index.IndexName}`] = hashOf(index);
        }
        break;
      }
      case 'AWS::S3::Bucket':
        refs[id] = local ?? id;
        refs[`${id}.Arn`] = `arn:aws:s3:::${local ?? id}`;
        break;
      case 'AWS::SQS::Queue': {
        const name = (local ?? id).split('/').at(-1) ?? id;
        refs[id] = local ?? id;
        refs[`${id}.Arn`] = `arn:aws:sqs:${region}:${accountId}:${name}`;
        refs[`${id}.QueueName`] = name;
        break;
      }
      default:
        refs[id] = `unmapped-${id}`;
        refs[`${id}.Arn`] = `arn:aws:unmapped:${region}:${accountId}:${id}`;
    }
  }
  const scope: ArnScope = { region, accountId, hashKeys };
  return { refs, scope };
}

/** The role's statements (inline and attached), resolved by `refs`. */
export const resolvedStatementsOf = (
  template: Template,
  roleLogicalId: string,
  refs: Readonly<Record<string, string>>,
): Statement[] =>
  policyStatementsOf(template, roleLogicalId).statements.map(
    (statement) => resolveValue(statement, refs) as Statement,
  );
