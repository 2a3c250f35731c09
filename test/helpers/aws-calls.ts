/**
 * What IAM authorises for one AWS API request on the wire: the action or actions, each on its
 * resource ARN with the context keys the construct's policies read. Read off the request a
 * prebuilt bundle's SDK sends (`aws-call-recorder.ts`), so whatever SDK the bundle carries, every
 * command is seen. The mapping follows the service authorization reference and the pages named
 * beside each rule.
 */
import type { IamRequest } from './iam-policy.js';

/** Where the ARNs point: the tests' account and region (`TEST_ACCOUNT`). */
export interface ArnScope {
  readonly region: string;
  readonly accountId: string;
  /** The partition key attribute of each table and index (`name` or `name/index/index`). */
  readonly hashKeys: Readonly<Record<string, string>>;
}

/** One API call as the recorder saw it, and what IAM checks for it. */
export interface AwsCall {
  /** The calling function (its session token names it). */
  readonly caller: string;
  readonly operation: string;
  readonly requests: readonly IamRequest[];
}

type Json = Record<string, unknown>;

/** A wire value as text: strings as they are, anything else as JSON (never `[object Object]`). */
const text = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
type AttributeMap = Record<string, Record<string, unknown> | undefined>;

const tableArn = (scope: ArnScope, table: string, index?: string) =>
  `arn:aws:dynamodb:${scope.region}:${scope.accountId}:table/${table}` +
  (index === undefined ? '' : `/index/${index}`);

/** A key attribute's scalar value (S, N or B), as `dynamodb:LeadingKeys` compares it. */
const scalarOf = (value: Record<string, unknown> | undefined): string | undefined => {
  const scalar = value?.S ?? value?.N ?? value?.B;
  return scalar === undefined ? undefined : text(scalar);
};

/** The partition key value of an item or key, under its table's hash key. */
function leadingKeyOf(scope: ArnScope, table: string, item: unknown): string[] {
  const hash = scope.hashKeys[table];
  const value = hash === undefined ? undefined : scalarOf((item as AttributeMap)[hash]);
  return value === undefined ? [] : [value];
}

/** The value a Query's key condition sets its partition key to. */
function queryLeadingKey(scope: ArnScope, input: Json): string[] {
  const table = text(input.TableName);
  const index = input.IndexName === undefined ? undefined : text(input.IndexName);
  const hash = scope.hashKeys[index === undefined ? table : `${table}/index/${index}`];
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as AttributeMap;
  const condition = text(input.KeyConditionExpression ?? '');
  for (const [, name, value] of condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const attribute = name?.startsWith('#') ? names[name] : name;
    const scalar = scalarOf(values[value ?? '']);
    if (attribute === hash && scalar !== undefined) return [scalar];
  }
  return [];
}

const itemRequest = (
  scope: ArnScope,
  action: string,
  table: string,
  keys: readonly string[],
): IamRequest => ({
  action: `dynamodb:${action}`,
  resource: tableArn(scope, table),
  context: { 'dynamodb:leadingkeys': keys },
});

/** The transaction's parts map to the item actions: "Using IAM with DynamoDB transactions". */
const TRANSACT_PARTS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

/**
 * DynamoDB (JSON protocol, `X-Amz-Target: DynamoDB_20120810.<Operation>`). TransactWriteItems
 * and TransactGetItems are authorised per item action
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html);
 * a batch by its own action per table, its partition keys as `dynamodb:LeadingKeys`
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
 */
export function dynamodbRequests(scope: ArnScope, operation: string, input: Json): IamRequest[] {
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    return (input.TransactItems as Json[]).flatMap((part) =>
      Object.entries(part).map(([kind, body]) => {
        const { TableName, Key, Item } = body as Json;
        const table = text(TableName);
        const action = TRANSACT_PARTS[kind];
        if (action === undefined) throw new Error(`a transaction part ${kind} is not mapped`);
        return itemRequest(scope, action, table, leadingKeyOf(scope, table, Key ?? Item));
      }),
    );
  }
  if (operation === 'BatchWriteItem' || operation === 'BatchGetItem') {
    return Object.entries(input.RequestItems as Json).map(([table, items]) => {
      const keys =
        operation === 'BatchGetItem'
          ? ((items as Json).Keys as unknown[])
          : (items as Json[]).map((item) => {
              const { PutRequest, DeleteRequest } = item as Record<string, Json | undefined>;
              return PutRequest?.Item ?? DeleteRequest?.Key;
            });
      return itemRequest(
        scope,
        operation,
        table,
        keys.flatMap((key) => leadingKeyOf(scope, table, key)),
      );
    });
  }
  const table = text(input.TableName);
  if (operation === 'Query' || operation === 'Scan') {
    const index = input.IndexName === undefined ? undefined : text(input.IndexName);
    const keys = operation === 'Query' ? queryLeadingKey(scope, input) : [];
    return [
      {
        action: `dynamodb:${operation}`,
        resource: tableArn(scope, table, index),
        context: { 'dynamodb:leadingkeys': keys },
      },
    ];
  }
  return [
    itemRequest(scope, operation, table, leadingKeyOf(scope, table, input.Key ?? input.Item)),
  ];
}

/** The batch operations SQS authorises by their single action (SQS API reference, each batch). */
const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

/**
 * SQS (JSON protocol, `X-Amz-Target: AmazonSQS.<Operation>`): the queue named by its URL's last
 * segment; a batch needs the single action's permission
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html).
 */
export function sqsRequests(scope: ArnScope, operation: string, input: Json): IamRequest[] {
  const name = text(input.QueueUrl ?? input.QueueName)
    .split('/')
    .at(-1);
  return [
    {
      action: `sqs:${SQS_ACTIONS[operation] ?? operation}`,
      resource: `arn:aws:sqs:${scope.region}:${scope.accountId}:${name}`,
    },
  ];
}

/**
 * S3 (REST, path-style): the operation from the method and the query, as the "Actions, resources
 * and condition keys for Amazon S3" page maps them
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html):
 * HeadObject needs s3:GetObject, ListObjectsV2 s3:ListBucket on the bucket with `s3:prefix`, a
 * DeleteObjects s3:DeleteObject on each key (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html).
 */
export function s3Requests(
  method: string,
  url: URL,
  body: string,
): { operation: string; requests: IamRequest[] } {
  const [, bucket = '', ...rest] = url.pathname.split('/');
  const key = rest.map(decodeURIComponent).join('/');
  const object = (action: string, objectKey = key): IamRequest => ({
    action: `s3:${action}`,
    resource: `arn:aws:s3:::${bucket}/${objectKey}`,
  });
  if (key === '') {
    if (method === 'GET' && url.searchParams.has('versions')) {
      return { operation: 'ListObjectVersions', requests: [bucketList('ListBucketVersions')] };
    }
    if (method === 'GET') return { operation: 'ListObjects', requests: [bucketList('ListBucket')] };
    if (method === 'POST' && url.searchParams.has('delete')) {
      const keys = [...body.matchAll(/<Key>([^<]*)<\/Key>/g)].map(([, k]) => unescapeXml(k ?? ''));
      return { operation: 'DeleteObjects', requests: keys.map((k) => object('DeleteObject', k)) };
    }
    throw new Error(`an S3 bucket request ${method} ${url.search} is not mapped`);
  }
  switch (method) {
    case 'GET':
      return { operation: 'GetObject', requests: [object('GetObject')] };
    case 'HEAD':
      return { operation: 'HeadObject', requests: [object('GetObject')] };
    case 'PUT':
      return { operation: 'PutObject', requests: [object('PutObject')] };
    case 'DELETE':
      return { operation: 'DeleteObject', requests: [object('DeleteObject')] };
    default:
      throw new Error(`an S3 object request ${method} is not mapped`);
  }

  /** `s3:prefix` only when the request names one (a condition on it fails without). */
  function bucketList(action: string): IamRequest {
    const prefix = url.searchParams.get('prefix');
    return {
      action: `s3:${action}`,
      resource: `arn:aws:s3:::${bucket}`,
      ...(prefix === null ? {} : { context: { 's3:prefix': prefix } }),
    };
  }
}

const unescapeXml = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
