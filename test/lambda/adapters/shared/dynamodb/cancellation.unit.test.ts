import {
  DynamoDBClient,
  TransactWriteItemsCommand,
  TransactionCanceledException,
  type CancellationReason,
} from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoCacheTable } from '../../../../../lambda/adapters/cache-table/dynamodb.js';
import {
  ErrorKind,
  failureOf,
  LeaseLostError,
  NewerGenerationError,
  RequestAlreadyCompletedError,
  RevalidatedDuringRenderError,
  TransactionConflictError,
} from '../../../../../lambda/core/errors.js';

// DynamoDB Local cannot be made to cancel with a conflict or throttling on demand, so these
// error paths are driven through a mocked client. Condition failures are covered for real in
// cache-table.test.ts.
const client = new DynamoDBClient({ region: 'us-east-1' });
const mock = mockClient(client);
const table = new DynamoCacheTable({ client, tableName: 'mocked' });
afterEach(() => {
  mock.reset();
});

const lease = { pk: 'CACHE#h', token: 't', expiresAt: 100 };
const publish = () =>
  table.publishGeneration({
    observed: undefined,
    lease,
    meta: { pk: 'CACHE#h', s3Key: 'k', generatedAt: 1, revalidateSeconds: 60 },
    now: 50,
    seal: { idempotencyKey: 'm', ttl: 1000 },
  });

const cancelledWith = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code): CancellationReason => ({ Code })),
  });

describe('publishGeneration failure classification', () => {
  it.each([
    [['None', 'TransactionConflict', 'None']],
    [['ThrottlingError', 'None', 'None']],
    [['None', 'None', 'ProvisionedThroughputExceeded']],
  ])('treats %j as retryable', async (codes) => {
    mock.on(TransactWriteItemsCommand).rejects(cancelledWith(...codes));
    await expect(publish()).rejects.toBeInstanceOf(TransactionConflictError);
  });

  it('reports a lost lease even when another action conflicted too', async () => {
    mock
      .on(TransactWriteItemsCommand)
      .rejects(cancelledWith('TransactionConflict', 'ConditionalCheckFailed', 'None'));
    await expect(publish()).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('reports a newer generation when only the META condition failed', async () => {
    mock
      .on(TransactWriteItemsCommand)
      .rejects(cancelledWith('ConditionalCheckFailed', 'None', 'None'));
    await expect(publish()).rejects.toBeInstanceOf(NewerGenerationError);
  });

  describe('a failed META condition: a mark since the render read META, or a newer generation', () => {
    const metaFailed = (Item?: CancellationReason['Item']) =>
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ConditionalCheckFailed', Item }, { Code: 'None' }],
      });
    const observed = { pk: 'CACHE#h', s3Key: 'k0', generatedAt: 0, revalidateSeconds: 0 };
    const publishOver = (read: typeof observed | undefined) =>
      table.publishGeneration({
        observed: read,
        lease,
        meta: { pk: 'CACHE#h', s3Key: 'k', generatedAt: 1, revalidateSeconds: 60 },
        now: 50,
      });

    it('reads a mark made since as a revalidation during the render', async () => {
      mock
        .on(TransactWriteItemsCommand)
        .rejects(metaFailed({ generated_at: { N: '0' }, revalidated_by: { S: 'rv_x' } }));
      await expect(publishOver(observed)).rejects.toBeInstanceOf(RevalidatedDuringRenderError);
    });

    it('reads a META gone since it was read as an expiry during the render', async () => {
      mock.on(TransactWriteItemsCommand).rejects(metaFailed(undefined));
      await expect(publishOver(observed)).rejects.toBeInstanceOf(RevalidatedDuringRenderError);
    });

    it('reads a newer generation as superseded, marked or not', async () => {
      mock
        .on(TransactWriteItemsCommand)
        .rejects(metaFailed({ generated_at: { N: '5' }, revalidated_by: { S: 'rv_x' } }));
      await expect(publishOver(observed)).rejects.toBeInstanceOf(NewerGenerationError);
    });
  });

  it('reports an intent completed by another delivery when only the REQ# condition failed', async () => {
    mock
      .on(TransactWriteItemsCommand)
      .rejects(cancelledWith('None', 'None', 'ConditionalCheckFailed'));
    await expect(publish()).rejects.toBeInstanceOf(RequestAlreadyCompletedError);
  });

  it('leaves errors the SDK retries itself to it: passed through, retryable by kind', async () => {
    // The SDK's standard retry strategy already retries throttling and TransactionInProgress;
    // retrying them again here would multiply the attempts.
    const error = Object.assign(new Error('in progress'), {
      name: 'TransactionInProgressException',
    });
    mock.on(TransactWriteItemsCommand).rejects(error);
    await expect(publish()).rejects.toBe(error);
    expect(failureOf(error).kind).toBe(ErrorKind.Retryable);
  });

  it('passes through a cancellation it cannot classify, with its reasons intact', async () => {
    const error = cancelledWith('ValidationError', 'None', 'None');
    mock.on(TransactWriteItemsCommand).rejects(error);
    await expect(publish()).rejects.toBe(error);
  });

  it('passes through unrelated errors', async () => {
    const error = new Error('socket hang up');
    mock.on(TransactWriteItemsCommand).rejects(error);
    await expect(publish()).rejects.toBe(error);
  });
});
