import { startDynamoDbLocal, type RunningBackend } from './dynamodb-local.js';
import { startS3rver } from './s3rver.js';
import { startLocalSqs } from './sqs.js';

export { assertJava, type RunningBackend } from './dynamodb-local.js';
export { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-aws.js';

export interface LocalBackends {
  readonly endpoints: { readonly dynamodb: string; readonly s3: string; readonly sqs: string };
  stop(): Promise<void>;
}

export interface LocalBackendOptions {
  /** Folder for s3rver's buckets. */
  readonly s3Directory: string;
  /** Folder for DynamoDB Local's file; in memory when unset. */
  readonly dynamoDbPath?: string;
  readonly ports?: { readonly dynamodb?: number; readonly s3?: number; readonly sqs?: number };
}

/** Starts DynamoDB Local, s3rver and local-aws-sqs; stops whichever started if one fails. */
export async function startLocalBackends(options: LocalBackendOptions): Promise<LocalBackends> {
  const started: RunningBackend[] = [];
  const stopAll = async () => {
    await Promise.allSettled(started.splice(0).map((backend) => backend.stop()));
  };
  try {
    const [dynamodb, s3, sqs] = await Promise.all([
      startDynamoDbLocal({
        ...(options.ports?.dynamodb === undefined ? {} : { port: options.ports.dynamodb }),
        ...(options.dynamoDbPath === undefined ? {} : { dbPath: options.dynamoDbPath }),
      }).then(track),
      startS3rver({
        directory: options.s3Directory,
        ...(options.ports?.s3 === undefined ? {} : { port: options.ports.s3 }),
      }).then(track),
      startLocalSqs(options.ports?.sqs === undefined ? {} : { port: options.ports.sqs }).then(
        track,
      ),
    ]);
    return {
      endpoints: { dynamodb: dynamodb.endpoint, s3: s3.endpoint, sqs: sqs.endpoint },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }

  function track(backend: RunningBackend): RunningBackend {
    started.push(backend);
    return backend;
  }
}
