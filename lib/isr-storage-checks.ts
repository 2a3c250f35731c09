/**
 * What synth can check of a table or bucket the user brings (`table`, `bucket` props): the
 * FaceTheory key schema, the TTL attribute, the status index, bucket versioning. Only a
 * resource defined in the same app can be seen; an imported one gets a warning naming what
 * the service relies on, which the user can acknowledge.
 */
import { Annotations, CfnResource, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { StatusIndex } from '../lambda/core/page/rows.js';

interface KeyElement {
  readonly attributeName: string;
  readonly keyType: string;
}
interface AttributeDefinition {
  readonly attributeName: string;
  readonly attributeType: string;
}
interface TableShape {
  readonly keySchema?: KeyElement[];
  readonly attributeDefinitions?: AttributeDefinition[];
  readonly timeToLiveSpecification?: { attributeName?: string; enabled?: boolean };
  readonly globalSecondaryIndexes?: {
    indexName: string;
    keySchema: KeyElement[];
    projection?: { projectionType?: string };
  }[];
}

const TABLE_TYPES = new Set(['AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable']);

/** The L1 resource behind a construct of this app, or undefined for an imported one. */
function cfnOf(construct: IConstruct, types: ReadonlySet<string>): CfnResource | undefined {
  const child = construct.node.defaultChild;
  return CfnResource.isCfnResource(child) && types.has(child.cfnResourceType) ? child : undefined;
}

/** Both L1 tables (Table, TableV2) name these properties alike; tokens resolved at synth. */
function shapeOf(table: CfnResource): TableShape {
  const stack = Stack.of(table);
  const read = (name: keyof TableShape): unknown =>
    stack.resolve((table as unknown as Record<string, unknown>)[name]);
  return {
    keySchema: read('keySchema') as KeyElement[],
    attributeDefinitions: read('attributeDefinitions') as AttributeDefinition[],
    timeToLiveSpecification: read(
      'timeToLiveSpecification',
    ) as TableShape['timeToLiveSpecification'],
    globalSecondaryIndexes: read('globalSecondaryIndexes') as TableShape['globalSecondaryIndexes'],
  };
}

/** `pk` HASH and `sk` RANGE, each of its type in the attribute definitions. */
function keyProblems(
  where: string,
  keys: readonly KeyElement[] | undefined,
  attributes: readonly AttributeDefinition[],
  expected: readonly [name: string, keyType: string, type: string][],
): string[] {
  const found = (keys ?? []).map((key) => {
    const type = attributes.find((attribute) => attribute.attributeName === key.attributeName);
    return `${key.attributeName} ${key.keyType} ${type?.attributeType ?? '?'}`;
  });
  const wanted = expected.map(([name, keyType, type]) => `${name} ${keyType} ${type}`);
  return found.join(', ') === wanted.join(', ')
    ? []
    : [`${where} must have the keys ${wanted.join(', ')}; it has ${found.join(', ') || 'none'}`];
}

/** Everything the service needs of a cache table it did not create. */
export function cacheTableProblems(shape: TableShape): string[] {
  const attributes = shape.attributeDefinitions ?? [];
  const problems = keyProblems('the cache table', shape.keySchema, attributes, [
    ['pk', 'HASH', 'S'],
    ['sk', 'RANGE', 'S'],
  ]);
  const ttl = shape.timeToLiveSpecification;
  if (ttl?.enabled !== true || ttl.attributeName !== 'ttl') {
    problems.push(
      'the cache table must have TTL on the attribute `ttl` (timeToLiveAttribute: "ttl"): rows of pages nobody asks for are collected by it',
    );
  }
  const index = shape.globalSecondaryIndexes?.find((gsi) => gsi.indexName === StatusIndex.Name);
  if (index === undefined) {
    problems.push(
      `the cache table must have the global secondary index ${StatusIndex.Name} (${StatusIndex.PartitionKey} string, ${StatusIndex.SortKey} number, all attributes projected): the sweeper and \`isr stuck\`/\`isr failed\` read it`,
    );
  } else {
    problems.push(
      ...keyProblems(`the index ${StatusIndex.Name}`, index.keySchema, attributes, [
        [StatusIndex.PartitionKey, 'HASH', 'S'],
        [StatusIndex.SortKey, 'RANGE', 'N'],
      ]),
    );
    if (index.projection?.projectionType !== 'ALL') {
      problems.push(
        `the index ${StatusIndex.Name} must project all attributes (ProjectionType ALL)`,
      );
    }
  }
  return problems;
}

/**
 * Checks a user's table at synth (after the whole app is built, so an index added later
 * counts); an imported table is only warned about.
 */
export function checkCacheTable(scope: IConstruct, table: ITable): void {
  const cfn = cfnOf(table, TABLE_TYPES);
  if (cfn === undefined) {
    Annotations.of(scope).addWarningV2(
      'facetheory-isr:table-unchecked',
      `The cache table ${table.node.path} is imported, so synth cannot check it: it needs string keys pk/sk, TTL on \`ttl\` and the index ${StatusIndex.Name} (see docs/DEPLOY.md).`,
    );
    return;
  }
  scope.node.addValidation({ validate: () => cacheTableProblems(shapeOf(cfn)) });
}

/**
 * Retired bodies are deleted into noncurrent versions, kept for the retention period, so a
 * read in flight still finds its body: the bucket must be versioned.
 */
export function checkBodyBucket(scope: IConstruct, bucket: IBucket): void {
  const cfn = cfnOf(bucket, new Set(['AWS::S3::Bucket']));
  if (cfn === undefined) {
    Annotations.of(scope).addWarningV2(
      'facetheory-isr:bucket-unchecked',
      `The body bucket ${bucket.node.path} is imported, so synth cannot check it: it must be versioned and expire noncurrent versions under the body prefix (see docs/DEPLOY.md).`,
    );
    return;
  }
  scope.node.addValidation({
    validate: () => {
      const versioning = Stack.of(cfn).resolve(
        (cfn as unknown as { versioningConfiguration?: unknown }).versioningConfiguration,
      ) as { status?: string } | undefined;
      return versioning?.status === 'Enabled'
        ? []
        : [
            'the body bucket must be versioned (versioned: true): a retired body is kept as a noncurrent version so reads in flight still find it',
          ];
    },
  });
}
