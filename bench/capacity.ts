/**
 * Counts SDK calls and DynamoDB capacity on a client, without touching the code under test: a
 * middleware asks every DynamoDB call for ReturnConsumedCapacity and tallies what comes back.
 *
 * DynamoDB Local under-reports transactions (one unit per item, where AWS charges two) and
 * reports nothing for a failed conditional write (AWS charges it), so the tally also prices each
 * call with DynamoDB's published rules: a write of an item up to 1 KB is 1 WCU, doubled inside a
 * transaction, charged even when its condition fails; a strongly consistent read up to 4 KB is
 * 1 RCU, an eventually consistent one 0.5.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';

export interface Tally {
  calls: Record<string, number>;
  localCapacity: number;
  pricedWcu: number;
  pricedRcu: number;
  /** Read units DynamoDB Local reports for Query, Scan and batch reads (sized by what was read). */
  readCapacity: number;
  /** Milliseconds spent inside each kind of call (request sent to answer parsed), summed. */
  callMs: Record<string, number>;
}

export const newTally = (): Tally => ({
  calls: {},
  localCapacity: 0,
  pricedWcu: 0,
  pricedRcu: 0,
  readCapacity: 0,
  callMs: {},
});

const timed = async <T>(tally: Tally, name: string, call: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  try {
    return await call();
  } finally {
    tally.callMs[name] = (tally.callMs[name] ?? 0) + performance.now() - started;
  }
};

const SIZED_READS = new Set(['QueryCommand', 'ScanCommand', 'BatchGetItemCommand']);

const WRITE_COMMANDS = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

export function tallyDynamoDb(client: DynamoDBClient, tally: Tally): void {
  client.middlewareStack.add(
    ((
        next: (args: {
          input: Record<string, unknown>;
        }) => Promise<{ output: Record<string, unknown> }>,
        context: { commandName?: string },
      ) =>
      async (args: { input: Record<string, unknown> }) => {
        const command = context.commandName ?? '?';
        tally.calls[`dynamodb:${command.replace(/Command$/, '')}`] =
          (tally.calls[`dynamodb:${command.replace(/Command$/, '')}`] ?? 0) + 1;
        args.input.ReturnConsumedCapacity = 'TOTAL';
        if (WRITE_COMMANDS.has(command)) tally.pricedWcu += 1;
        if (command === 'BatchWriteItemCommand') {
          const requests = Object.values(
            (args.input.RequestItems as Record<string, unknown[]> | undefined) ?? {},
          );
          tally.pricedWcu += requests.reduce((sum, list) => sum + list.length, 0);
        }
        if (command === 'TransactWriteItemsCommand') {
          tally.pricedWcu += 2 * ((args.input.TransactItems as unknown[] | undefined)?.length ?? 0);
        }
        if (command === 'GetItemCommand')
          tally.pricedRcu += args.input.ConsistentRead === true ? 1 : 0.5;
        const result = await timed(tally, `dynamodb:${command.replace(/Command$/, '')}`, () =>
          next(args),
        );
        const consumed = result.output.ConsumedCapacity as
          { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;
        for (const entry of Array.isArray(consumed)
          ? consumed
          : consumed === undefined
            ? []
            : [consumed]) {
          tally.localCapacity += entry.CapacityUnits ?? 0;
          if (SIZED_READS.has(command)) tally.readCapacity += entry.CapacityUnits ?? 0;
        }
        return result;
      }) as never,
    { step: 'initialize', name: 'bench-tally' },
  );
}

export function tallyS3(client: S3Client, tally: Tally): void {
  client.middlewareStack.add(
    ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: unknown) => {
        const name = `s3:${(context.commandName ?? '?').replace(/Command$/, '')}`;
        tally.calls[name] = (tally.calls[name] ?? 0) + 1;
        return timed(tally, name, () => next(args));
      }) as never,
    { step: 'initialize', name: 'bench-tally' },
  );
}
