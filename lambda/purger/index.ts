/**
 * Lambda entry point of the purger: configuration is read and validated once, at cold start.
 * Its own two SDK clients (DynamoDB for pending purges, SQS for its DLQ; CloudFront is built
 * by `shared/cdn.ts`), not `lambda-runtime.ts`'s three: no S3 client in its bundle.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadPurgerConfig } from '../shared/config.js';
import { buildPurgerHandler } from './build.js';

const config = loadPurgerConfig(process.env);
export const handler = buildPurgerHandler(config, {
  clients: { dynamodb: new DynamoDBClient({}), sqs: new SQSClient({}) },
});
