/**
 * The Lambda context as `npm start` and the tests hand it to a handler: the part the handlers
 * read (remaining time drives idempotency expiry), written once. `test/helpers/bundle-runner.js`
 * keeps its own copy: it is plain ESM run by node, so no TypeScript reaches a prebuilt bundle.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export interface ContextOptions {
  readonly functionName: string;
  /** What `getRemainingTimeInMillis` answers: a deadline's distance, or a test's fixed time. */
  readonly remainingMs: () => number;
  readonly logStreamName: string;
  /** @default a random UUID, as Lambda gives each invocation */
  readonly awsRequestId?: string;
}

export function contextOf(options: ContextOptions): Context {
  const { functionName } = options;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: options.awsRequestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: options.logStreamName,
    getRemainingTimeInMillis: options.remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
