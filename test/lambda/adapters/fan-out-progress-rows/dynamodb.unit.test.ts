import {
  DynamoDBClient,
  TransactWriteItemsCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoFanOutProgressRows } from '../../../../lambda/adapters/fan-out-progress-rows/dynamodb.js';
import { TransactionConflictError } from '../../../../lambda/core/errors.js';
import { progress } from './contract.js';

// DynamoDB Local cannot be made to cancel with a conflict on demand: the cancellation's
// reading is driven through a mocked client (the conditions are shown on DynamoDB Local by
// the contract, test/lambda/adapters/fan-out-progress-rows/contract.ts).
const client = new DynamoDBClient({ region: 'us-east-1' });
const mock = mockClient(client);
const rows = new DynamoFanOutProgressRows({ client, tableName: 'mocked' });
afterEach(() => {
  mock.reset();
});

const move = { from: '', to: 'c1', counts: { marked: 2, regenerations: 0 }, atMs: 2 };
const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

describe('DynamoFanOutProgressRows: a step transaction cancelled', () => {
  it('by its cursor condition is a duplicate (false), not an error', async () => {
    mock.on(TransactWriteItemsCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    expect(await rows.advance(progress, move)).toBe(false);
    expect(await rows.finish(progress, { ...move })).toBe(false);
  });

  it('by a concurrent write to the status is retryable', async () => {
    mock.on(TransactWriteItemsCommand).rejects(cancelled('None', 'TransactionConflict'));
    await expect(rows.advance(progress, move)).rejects.toBeInstanceOf(TransactionConflictError);
  });

  it('writes the cursor and the counts in one transaction, counting a finish down', async () => {
    mock.on(TransactWriteItemsCommand).resolves({});
    await rows.finish(progress, move);
    const [call] = mock.commandCalls(TransactWriteItemsCommand);
    const [row, status] = call?.args[0].input.TransactItems ?? [];
    expect(row?.Delete?.ConditionExpression).toBe('#cursor = :from');
    expect(status?.Update?.UpdateExpression).toContain('fan_outs :minus');
    expect(status?.Update?.ExpressionAttributeValues?.[':marked']).toEqual({ N: '2' });
  });
});
