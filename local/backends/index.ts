import { describeError, type RunningBackend } from './backend.js';
import { startDynamoDbLocal } from './dynamodb-local.js';
import { startS3rver } from './s3rver.js';
import { startLocalSqs } from './sqs.js';

export { LOOPBACK, type RunningBackend } from './backend.js';
export { assertJava } from './dynamodb-local.js';
export { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-aws.js';

export interface LocalBackends {
  readonly endpoints: { readonly dynamodb: string; readonly s3: string; readonly sqs: string };
  /** Stops them all; resolves with what was not clean (empty when each stopped on its own). */
  stop(): Promise<readonly string[]>;
}

export interface LocalBackendOptions {
  /** Folder for s3rver's buckets. */
  readonly s3Directory: string;
  /** Folder for DynamoDB Local's file; in memory when unset. */
  readonly dynamoDbPath?: string;
  readonly ports?: { readonly dynamodb?: number; readonly s3?: number; readonly sqs?: number };
  /** Called if a backend process ends while running without being asked to. */
  readonly onUnexpectedExit?: (what: string) => void;
  /** Start DynamoDB Local sooner, for less peak throughput (not for benchmarks). @default false */
  readonly fastStartup?: boolean;
}

/**
 * Starts DynamoDB Local, s3rver and local-aws-sqs, all on 127.0.0.1; stops whichever started if
 * one fails.
 */
export async function startLocalBackends(options: LocalBackendOptions): Promise<LocalBackends> {
  const started: RunningBackend[] = [];
  const stopAll = async (): Promise<readonly string[]> => {
    const results = await Promise.allSettled(started.splice(0).map((backend) => backend.stop()));
    return results.flatMap((result) =>
      result.status === 'fulfilled' ? result.value : [describeError(result.reason)],
    );
  };
  try {
    const [dynamodb, s3, sqs] = await Promise.all([
      startDynamoDbLocal({
        ...(options.ports?.dynamodb === undefined ? {} : { port: options.ports.dynamodb }),
        ...(options.dynamoDbPath === undefined ? {} : { dbPath: options.dynamoDbPath }),
        onUnexpectedExit: options.onUnexpectedExit,
        fastStartup: options.fastStartup,
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
