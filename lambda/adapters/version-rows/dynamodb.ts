import { DeleteItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { VersionRows } from '../../core/page/ports.js';
import { keyOf, str } from '../shared/dynamodb/items.js';

export interface DynamoVersionRowsOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/**
 * VER# rows as a publisher needs them: the few a publish dropped from META's list are deleted
 * (the publish transaction writes new ones). Kept apart from the operator's `DynamoPageHistory`,
 * so the functions bundle only this.
 */
export class DynamoVersionRows implements VersionRows {
  protected readonly client: DynamoDBClient;
  protected readonly tableName: string;

  constructor(options: DynamoVersionRowsOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  async forget(pk: string, sks: readonly string[]): Promise<string[]> {
    const deleted = await Promise.all(
      sks.map(async (sk) => {
        const { Attributes } = await this.client.send(
          new DeleteItemCommand({
            TableName: this.tableName,
            Key: keyOf(pk, sk),
            ReturnValues: 'ALL_OLD',
          }),
        );
        return Attributes === undefined ? undefined : str(Attributes, 's3_key');
      }),
    );
    return deleted.filter((key): key is string => key !== undefined);
  }
}
