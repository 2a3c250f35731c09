/**
 * What the bundle test's recorder says IAM checks for a call (test/helpers/aws-calls.ts): the
 * mappings the synthesized policies depend on, each against the page that states it.
 */
import { describe, expect, it } from '@jest/globals';
import { dynamodbRequests, s3Requests, sqsRequests } from '../helpers/aws-calls.js';
import { evaluate } from '../helpers/iam-policy.js';

const scope = {
  region: 'us-east-1',
  accountId: '123456789012',
  hashKeys: { t: 'pk', 't/index/status-index': 'status' },
};
const table = 'arn:aws:dynamodb:us-east-1:123456789012:table/t';

describe('the IAM requests of a recorded call', () => {
  it('a transaction is its parts, each as its item action with its partition key', () => {
    const requests = dynamodbRequests(scope, 'TransactWriteItems', {
      TransactItems: [
        { Put: { TableName: 't', Item: { pk: { S: 'CACHE#a' }, sk: { S: 'META' } } } },
        { ConditionCheck: { TableName: 't', Key: { pk: { S: 'CACHE#a' }, sk: { S: 'LOCK' } } } },
      ],
    });
    expect(requests).toEqual([
      {
        action: 'dynamodb:PutItem',
        resource: table,
        context: { 'dynamodb:leadingkeys': ['CACHE#a'] },
      },
      {
        action: 'dynamodb:ConditionCheckItem',
        resource: table,
        context: { 'dynamodb:leadingkeys': ['CACHE#a'] },
      },
    ]);
  });

  it("a Query on an index names the index, its leading key the index's partition key value", () => {
    const [request] = dynamodbRequests(scope, 'Query', {
      TableName: 't',
      IndexName: 'status-index',
      KeyConditionExpression: '#s = :s AND #at < :now',
      ExpressionAttributeNames: { '#s': 'status', '#at': 'at' },
      ExpressionAttributeValues: { ':s': { S: 'LEASE#1' }, ':now': { N: '5' } },
    });
    expect(request).toEqual({
      action: 'dynamodb:Query',
      resource: `${table}/index/status-index`,
      context: { 'dynamodb:leadingkeys': ['LEASE#1'] },
    });
    // Negative control: a grant on the table alone does not cover its index.
    const onTable = [{ Effect: 'Allow' as const, Action: 'dynamodb:Query', Resource: table }];
    expect(evaluate(onTable, request)).toBe('implicit-deny');
  });

  it('a LeadingKeys condition denies a batch with one key outside it', () => {
    const [request] = dynamodbRequests(scope, 'BatchWriteItem', {
      RequestItems: {
        t: [
          { PutRequest: { Item: { pk: { S: 'TAG#_#a' } } } },
          { DeleteRequest: { Key: { pk: { S: 'CACHE#x' } } } },
        ],
      },
    });
    const tagsOnly = [
      {
        Effect: 'Allow' as const,
        Action: 'dynamodb:BatchWriteItem',
        Resource: table,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TAG#*'] } },
      },
    ];
    expect(evaluate(tagsOnly, request)).toBe('implicit-deny');
  });

  it('S3: HeadObject needs GetObject, a listing ListBucket with its prefix, DeleteObjects each key', () => {
    const url = (path: string) => new URL(path, 'http://127.0.0.1');
    expect(s3Requests('HEAD', url('/b/pages/x'), '').requests).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::b/pages/x' },
    ]);
    expect(s3Requests('GET', url('/b?list-type=2&prefix=pages%2F'), '').requests).toEqual([
      { action: 's3:ListBucket', resource: 'arn:aws:s3:::b', context: { 's3:prefix': 'pages/' } },
    ]);
    const body =
      '<Delete><Object><Key>pages/a</Key></Object><Object><Key>pages/b</Key></Object></Delete>';
    expect(s3Requests('POST', url('/b?delete'), body).requests.map((r) => r.resource)).toEqual([
      'arn:aws:s3:::b/pages/a',
      'arn:aws:s3:::b/pages/b',
    ]);
  });

  it('SQS: a batch send is SendMessage on the queue its URL names', () => {
    expect(
      sqsRequests(scope, 'SendMessageBatch', { QueueUrl: 'http://127.0.0.1:9/000/q.fifo' }),
    ).toEqual([
      { action: 'sqs:SendMessage', resource: 'arn:aws:sqs:us-east-1:123456789012:q.fifo' },
    ]);
  });
});
