// Baseline for the bundle benchmark: a Lambda that only creates the three SDK clients the
// service uses, bundled the same way. Its size and init time are what any such function pays.
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

export const clients = [new DynamoDBClient({}), new S3Client({}), new SQSClient({})];
export const commands = [GetItemCommand, GetObjectCommand, SendMessageCommand];
export const handler = () => Promise.resolve(clients.length + commands.length);
